// Restart settling (see restart_settling.hpp).
#include "harness/agent/cases/restart_settling.hpp"

#include "harness/agent/cases/bundle_outcome.hpp"
#include "harness/agent/cases/case_id.hpp"
#include "harness/case/run/durable_file.hpp"
#include "harness/agent/http/json_text.hpp"
#include "harness/json/limited_parse.hpp"

#include <cstdio>
#include <optional>

namespace fs = std::filesystem;

namespace harness::agent {
using nlohmann::json;
namespace {

/// True when <dir>/status.json holds a final state (a case an earlier run finished).
bool has_final_status(const fs::path& dir) {
  try {
    const auto text = harness::case_::read_small_file(dir / "status.json", kStateFileMax);
    if (!text) return false;
    const auto state = parse_state(str_or(harness::json::parse_or_discarded(*text), "state", ""));
    return state && is_final(*state);
  } catch (const std::exception&) {
    return false;  // unreadable: settled (and rewritten) like an unfinished case
  }
}

/// The executor's record of the case in `dir`, when it has a readable one.
std::optional<ExecutorRecord> record_in(const std::string& id, const fs::path& dir) {
  try {
    return read_executor_record(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "agent: settling case %s: %s\n", id.c_str(), e.what());
    return std::nullopt;
  }
}

/// The outcome of a case whose executor left no bundle: lost once the pressure phase
/// began (harness/case/SPEC.md "Status"), else infra_failed; unclean unless it never started.
BundleOutcome without_bundle(const CaseRec& c) {
  BundleOutcome o;
  std::error_code ec;
  if (!fs::exists(c.dir / "spec.json", ec)) {
    o.error = "the executor never started";
    return o;
  }
  CaseRec running = c;
  running.state = CaseState::Running;
  const std::string phase = phase_of(running);
  if (phase == "pressure" || phase == "recovery" || phase == "restoration" || phase == "done") o.state = CaseState::Lost;
  o.error = "no bundle (last phase " + phase + ")";
  o.unclean = true;
  o.problems = json::array({"no restoration verdict: the agent running case " + c.id +
                            " stopped before its executor ended and no bundle was written, so the VM's state is unknown"});
  o.restoration = {{"clean", nullptr}, {"problems", o.problems}};
  return o;
}

/// Settles one case directory.
void settle_one(Registry& reg, UncleanMark& mark, OldExecutors& old, const std::string& id) {
  auto c = std::make_shared<CaseRec>();
  c->id = id;
  c->dir = reg.case_dir(id);
  const auto record = record_in(id, c->dir);
  const bool alive = record && group_alive(*record);
  std::error_code ec;
  const BundleOutcome o = fs::exists(bundle_path(*c), ec) ? read_bundle(id, bundle_path(*c), -1) : without_bundle(*c);
  std::string error = "settled when the agent restarted: the agent running this case stopped before its executor ended";
  if (alive) error += " (its executor, process group " + std::to_string(record->pid) + ", was still running)";
  if (!o.error.empty()) error += "; " + o.error;
  if (o.unclean) mark.write(id, o.problems);  // durable before the result is reported
  {
    std::lock_guard<std::mutex> lk(reg.mu);
    reg.cases[id] = c;
  }
  reg.publish_final(c, o.state, error, -1, o.restoration);
  if (alive) old.add(id, *record);
}

}  // namespace

void OldExecutors::add(const std::string& case_id, const ExecutorRecord& r) {
  std::lock_guard<std::mutex> lk(mu_);
  live_.push_back({case_id, r});
}

void OldExecutors::refresh(Registry& reg) {
  std::lock_guard<std::mutex> lk(mu_);  // one refresh at a time; the registry's lock is taken only to publish
  if (live_.empty()) return;
  while (!live_.empty() && !group_alive(live_.front().record)) live_.erase(live_.begin());
  std::lock_guard<std::mutex> rl(reg.mu);
  const bool ours = reg.busy.idle() || reg.busy.holder == Busy::Holder::OldExecutor;
  if (!ours) return;
  const Busy now = live_.empty() ? Busy{}
                                 : Busy{Busy::Holder::OldExecutor, live_.front().case_id, live_.front().record.pid};
  if (now.holder == reg.busy.holder && now.case_id == reg.busy.case_id && now.pgid == reg.busy.pgid) return;
  reg.busy = now;
  reg.bump();
}

std::vector<std::string> settle_unfinished_cases(Registry& reg, UncleanMark& mark, OldExecutors& old) {
  std::vector<std::string> settled;
  std::error_code ec;
  for (fs::directory_iterator it(reg.state_dir / "cases", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string id = it->path().filename().string();
    std::error_code dir_ec;
    if (!safe_case_id(id) || !it->is_directory(dir_ec) || has_final_status(it->path())) continue;
    settle_one(reg, mark, old, id);
    settled.push_back(id);
  }
  old.refresh(reg);
  return settled;
}

}  // namespace harness::agent
