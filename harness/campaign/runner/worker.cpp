// One guest's worker: its cases, their gate and the steps of an attempt (see worker.hpp).
#include "harness/campaign/runner/worker.hpp"

#include "harness/agent/cases/unclean_mark.hpp"
#include "harness/campaign/runner/adoption.hpp"
#include "harness/campaign/runner/takeover.hpp"
#include "harness/pool/agent_wait.hpp"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <optional>

namespace fs = std::filesystem;

namespace harness::campaign {

namespace {

std::string boot_id_of(const nlohmann::json& health) {
  return health.contains("boot_id") && health["boot_id"].is_string() ? health["boot_id"].get<std::string>() : "";
}

double seconds_since(std::int64_t t0) { return static_cast<double>(unix_now_ns() - t0) / 1e9; }

}  // namespace

Worker::Worker(const Campaign& c, const RunOptions& opt, pool::Instance& instance, const std::string& engine_kind,
               std::optional<bool> overcommitted, std::vector<const ScheduledCase*> cases, Progress& prog,
               std::atomic<int>& attempts, std::atomic<int>& takeovers, VmQualification qual)
    : c_(c), opt_(opt), instance_(instance), guest_(instance.guest()),
      ran_on_{guest_.accelerator, guest_.host, overcommitted, engine_kind}, cases_(std::move(cases)), prog_(prog),
      attempts_(attempts), takeovers_(takeovers), qual_(std::move(qual)) {
  fresh_ = instance_.fresh_boot_per_case();
  agent_reboot_ = guest_.reboot_between_cases;
}

void Worker::run() {
  try {
    results::Db db(opt_.db_path, results::Db::Mode::ReadWrite);
    db_ = &db;
    agent::ClientOptions co;
    co.request_timeout = std::chrono::milliseconds(opt_.request_timeout_ms);
    client_ = std::make_unique<agent::AgentClient>(agent::AgentClient::from_token_file(guest_.url, guest_.token_file, pool::client_options(guest_, co)));
    for (const auto* k : cases_)
      if (!run_case(*k)) break;
  } catch (const std::exception& e) {
    // Host-level problem (token file unreadable, DB error): its cases stay as they are.
    prog_.note(guest_.name, std::string("worker stopped: ") + e.what());
  }
  db_ = nullptr;
}

bool Worker::run_case(const ScheduledCase& k) {
  for (;;) {
    const auto p = case_progress(*db_, k.case_id);
    if (p.state == "completed" || p.state == "lost") return true;  // outcomes: never rerun (PROTOCOL.md)
    if (p.inflight) {  // an interrupted runner's attempt: take it over, never start another
      ++takeovers_;
      if (!take_over_case(k)) return false;
      continue;
    }
    if (p.runs_since_mark >= 1 + c_.max_infra_retries) return true;  // left infra_failed
    // A guest that gets a fresh boot before each case needs no wait (the boot is the remedy).
    if (!fresh_ && !gate()) return false;
    ++attempts_;
    if (!attempt(k, p.last_attempt + 1)) return false;
  }
}

bool Worker::gate() {
  // One GET /v1/health per case: the wait's answer also carries the unclean mark and the boot id.
  std::map<std::string, nlohmann::json> health;
  const auto still = wait_for_agents({guest_}, opt_.host_wait, opt_.out, &health);
  if (!still.empty()) {
    unreachable = still.front();
    prog_.note(guest_.name, unreachable + "; its remaining cases stay pending (no attempt spent)");
    return false;
  }
  std::optional<nlohmann::json> answer;
  if (const auto it = health.find(guest_.name); it != health.end()) {
    answer = it->second;
  } else if (auto h = client_->health(); h.ok()) {
    answer = std::move(h).value();
  }  // else not answering now: the attempt itself will tell
  if (answer) last_boot_id_ = boot_id_of(*answer);
  if (const auto why = answer ? agent::UncleanMark::reason_in_health(*answer) : std::string(); !why.empty()) {
    unusable = guest_.name + " (" + guest_.url + "): " + why;
    set_unusable_mark(*db_, guest_.name, why);
    prog_.note(guest_.name, "VM unusable: " + why + "; its remaining cases stay pending (no attempt spent)");
    return false;
  }
  set_unusable_mark(*db_, guest_.name, "");
  return true;
}

bool Worker::attempt(const ScheduledCase& k, int n) {
  Attempt at;
  at.k = &k;
  at.rec = AttemptRecord{k.case_id, n, guest_.name + " " + guest_.url, unix_now_ns(), 0, nullptr};
  at.agent_id = agent_case_id(k.case_id, n, db_tag(*db_));
  at.rec.detail = {{"agent_case_id", at.agent_id}, {"runner_pid", ::getpid()}, {"submitted", false},
                   {"phase", nullptr},             {"last_seen_unix_ns", nullptr}};
  begin_attempt(*db_, at.rec);  // in flight from here on: a killed runner leaves this row (takeover)
  prog_.start(guest_.name, k.case_id, n);
  return run_steps(at);
}

bool Worker::take_over_case(const ScheduledCase& k) {
  const auto row = inflight_attempt(*db_, k.case_id);
  if (!row) return true;
  const std::int64_t t = unix_now_ns();
  TakenOver tk = take_over(*row, guest_.name + " " + guest_.url, agent_case_id(k.case_id, row->attempt, db_tag(*db_)),
                           ::getpid(), t);
  update_inflight(*db_, tk.rec);
  prog_.start(guest_.name, k.case_id, tk.rec.attempt, /*taken_over=*/true);
  prog_.note(guest_.name, takeover_note(tk, t));
  Attempt at;
  at.k = &k;
  at.rec = std::move(tk.rec);
  at.agent_id = tk.agent_id;
  at.seen = tk.seen;
  at.adopt = true;
  at.step = Step::Follow;  // not answering now: follow() waits for it like any running case
  if (client_->status(at.agent_id).is(agent::FailureKind::NotFound)) {
    Evidence e = evidence(at);
    e.said = AgentSaid::CaseUnknown;
    e.agent_error = "taken over after the runner was interrupted: the agent no longer knows the case (guest restarted?)";
    e.taken_over = true;
    e.submitted = tk.submitted;
    at.ruling = judge_vanished(e);
    at.step = Step::Judge;
  }
  return run_steps(at);
}

bool Worker::run_steps(Attempt& at) {
  while (at.step != Step::Done) {
    const Step was = at.step;
    try {
      switch (at.step) {
        case Step::Prepare: prepare(at); break;
        case Step::Submit: submit(at); break;
        case Step::Follow: follow(at); break;
        case Step::Import: import(at); break;
        case Step::Judge: judge(at); break;
        case Step::Done: break;
      }
    } catch (const std::exception& e) {
      // The attempt's boundary (docs/DESIGN.md "Errors"). Before the case was sent nothing
      // of it ran: an infrastructure failure. Once the agent may hold it, only evidence from
      // the VM decides (PROTOCOL.md): the row stays in flight, as after a kill -9, and the
      // next run takes it over; this worker stops (its other cases stay as they are).
      if (was == Step::Prepare || was == Step::Submit) {
        at.infra_error = std::string("runner error before the case was sent: ") + e.what();
        at.step = Step::Judge;
        continue;
      }
      prog_.note(guest_.name, std::string("worker stopped: ") + e.what() + " (" + at.rec.case_id +
                                  " left in flight for the next run to take over)");
      return false;
    }
  }
  return true;
}

void Worker::prepare(Attempt& at) {
  at.step = Step::Submit;
  // Does the agent already know this case id? Adopt it: its result was never imported,
  // so importing it now is neither a loss nor a rerun.
  const auto known = client_->status(at.agent_id);
  if (known.ok()) {
    at.adopt = true;
    prog_.note(guest_.name, "adopting " + at.agent_id + " already known to the agent");
    return;
  }
  if (!known.is(agent::FailureKind::NotFound) && !fresh_) {
    at.infra_error = known.message();
    at.step = Step::Judge;
    return;
  }
  if (fresh_) return boot_fresh(at);
  if (agent_reboot_) return reboot_through_agent(at);
  if (!last_boot_id_.empty()) at.rec.detail["boot_id"] = last_boot_id_;  // the boot the reused guest runs this case on
}

void Worker::boot_fresh(Attempt& at) {
  // A fresh guest for the case, through the engine (with the case's variant boot).
  prog_.phase(guest_.name, "reboot");
  pool::BootRequest r = boot_request(at.k->spec);
  r.log_dir = (fs::absolute(opt_.db_path).parent_path() / ".consoles" /
               (at.k->case_id + ".a" + std::to_string(at.rec.attempt))).string();
  const std::int64_t t0 = unix_now_ns();
  try {
    const auto b = instance_.fresh_boot(r);
    at.rec.detail["boot"] = {{"seconds", seconds_since(t0)}, {"boot_to_ready_s", b.boot_to_ready_s},
                             {"accelerator", b.accelerator}};
    if (!b.note.empty()) prog_.note(guest_.name, b.note);
    if (const auto id = boot_id_now(); !id.empty()) at.rec.detail["boot_id"] = id;
    update_inflight(*db_, at.rec);
  } catch (const pool::BootError& e) {
    // The guest never came up: nothing of the case ran. An infra failure before the
    // case (rerun while retries last), never a lost case; the console says why.
    at.rec.detail["boot"] = {{"error", e.what()}, {"console_tail", e.console_tail()}, {"seconds", seconds_since(t0)}};
    at.infra_error = std::string("fresh boot before the case failed: ") + e.what();
    at.step = Step::Judge;
  }
}

void Worker::reboot_through_agent(Attempt& at) {
  // A reused real VM: a fresh kernel through its agent before the case (HOSTS.md).
  prog_.phase(guest_.name, "reboot");
  const std::int64_t t0 = unix_now_ns();
  const auto r = client_->reboot_and_wait(std::chrono::seconds(guest_.reboot_timeout_s));
  if (!r.ok()) {
    at.rec.detail["reboot"] = {{"error", r.message()}, {"seconds", seconds_since(t0)}};
    at.infra_error = "reboot before the case: " + r.message();
    at.step = Step::Judge;
    return;
  }
  const auto& [before, after] = r.value();
  at.rec.detail["reboot"] = {{"boot_id_before", before}, {"boot_id_after", after}, {"seconds", seconds_since(t0)}};
  if (!after.empty()) at.rec.detail["boot_id"] = after;
  update_inflight(*db_, at.rec);
}

void Worker::submit(Attempt& at) {
  at.seen.submitted_unix_ns = unix_now_ns();
  at.rec.detail["submitted"] = true;  // from here the agent may have the case
  at.rec.detail["submitted_unix_ns"] = at.seen.submitted_unix_ns;
  update_inflight(*db_, at.rec);
  at.step = Step::Follow;
  if (at.adopt) return;
  nlohmann::json spec = at.k->spec;
  spec["case_id"] = at.agent_id;
  const auto poll = std::chrono::milliseconds(c_.poll_interval_ms);
  const SubmitTimes times{poll, std::max(opt_.silence.before_pressure, poll * 10), c_.case_timeout_s};
  const auto s = submit_or_adopt(*client_, spec, at.agent_id, times,
                                 [this](const std::string& line) { prog_.note(guest_.name, line); });
  if (s.kind == Submission::Kind::Failed) {
    at.infra_error = s.why;
    at.step = Step::Judge;
  }
}

void Worker::import(Attempt& at) {
  at.step = Step::Done;
  put_seen(at.rec, at.seen);
  const auto& st = at.status;
  Evidence ended = evidence(at);
  ended.said = AgentSaid::Ended;
  if (st.state == "cancelled") {
    ended.ended_why = "agent reports the case cancelled";
    at.ruling = judge_vanished(ended);
    at.step = Step::Judge;
    return;
  }
  // Bundle -> one transaction (rows + schedule.state + attempts row).
  const fs::path dir = fs::absolute(opt_.db_path).parent_path() / ".bundles";
  fs::create_directories(dir);
  const fs::path bundle = dir / (at.rec.case_id + ".a" + std::to_string(at.rec.attempt) + ".db");
  if (const auto got = client_->download_bundle(at.agent_id, bundle.string()); !got.ok()) {
    ended.ended_why = st.state == "infra_failed"
                          ? "agent: " + (st.error.empty() ? std::string("infra_failed without a bundle") : st.error)
                          : "bundle download failed: " + got.message();
    at.ruling = judge_vanished(ended);
    at.step = Step::Judge;
    return;
  }
  at.rec.ended_unix_ns = unix_now_ns();
  std::string status;
  try {
    status = import_attempt(*db_, bundle.string(), at.rec, ran_on_, at.agent_id);
  } catch (const std::exception& e) {  // the bundle is kept for the operator; the attempt is an infra failure
    at.infra_error = "bundle import failed (kept at " + bundle.string() + "): " + e.what();
    at.step = Step::Judge;
    return;
  }
  std::error_code ec;
  fs::remove(bundle, ec);
  // A lost bundle (the executor's own failure after the pressure phase started) is an
  // outcome like a completed one: final, never rerun (PROTOCOL.md).
  const bool outcome = status == "completed" || status == "lost";
  prog_.finish(guest_.name, at.rec.case_id, status, status == "completed" ? "" : st.error,
               outcome || case_progress(*db_, at.rec.case_id).runs_since_mark >= 1 + c_.max_infra_retries);
}

void Worker::judge(Attempt& at) {
  at.step = Step::Done;
  AttemptRecord& a = at.rec;
  if (!at.infra_error.empty()) return fail(a, at.infra_error);
  put_seen(a, at.seen);
  if (at.ruling.verdict == Verdict::Interrupted) {
    a.kind = "interrupted";
    return fail(a, at.ruling.why);
  }
  put_guest_evidence(a);
  if (at.ruling.verdict != Verdict::Lost) return fail(a, at.ruling.why);
  a.ended_unix_ns = unix_now_ns();
  record_lost(*db_, *at.k, c_.name, a,
              LostCase{at.seen.phase, at.seen.last_seen_unix_ns, at.ruling.why, qual_.source_commit, qual_.source_dirty,
                       ran_on_});
  prog_.finish(guest_.name, a.case_id, "lost", at.ruling.why, true);
}

std::string Worker::boot_id_now() {
  const auto h = client_->health();
  return h.ok() ? boot_id_of(h.value()) : "";
}

void Worker::put_guest_evidence(AttemptRecord& a) {
  const pool::Liveness l = instance_.liveness();
  std::string tail = instance_.diagnose(4096);
  if (l == pool::Liveness::Unknown && tail.empty()) return;  // the engine can tell nothing of this guest
  if (!a.detail.is_object()) a.detail = nlohmann::json::object();
  a.detail["guest"] = {{"liveness", pool::to_string(l)}, {"console_tail", std::move(tail)}};
}

void Worker::fail(AttemptRecord& a, const std::string& msg) {
  a.ended_unix_ns = unix_now_ns();
  record_infra_failure(*db_, a, msg);
  const auto p = case_progress(*db_, a.case_id);
  prog_.finish(guest_.name, a.case_id, "infra_failed", msg, p.runs_since_mark >= 1 + c_.max_infra_retries);
}

pool::BootRequest boot_request(const nlohmann::json& spec) {
  pool::BootRequest r;
  if (!spec.contains("variant") || !spec["variant"].is_object()) return r;
  const auto& v = spec["variant"];
  if (v.contains("kernel_image_dir") && v["kernel_image_dir"].is_string())
    r.image_dir = v["kernel_image_dir"].get<std::string>();
  if (v.contains("cmdline") && v["cmdline"].is_array())
    for (const auto& p : v["cmdline"]) r.cmdline.push_back(p.get<std::string>());
  return r;
}

}  // namespace harness::campaign
