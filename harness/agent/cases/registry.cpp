// The agent's registry of cases and its busy slot (see registry.hpp).
#include "harness/agent/cases/registry.hpp"

#include "harness/case/run/durable_file.hpp"
#include "harness/agent/http/json_text.hpp"
#include "harness/json/limited_parse.hpp"

#include <cstdio>

namespace harness::agent {
using nlohmann::json;

json Registry::status_of(const std::shared_ptr<CaseRec>& c) {
  CaseRec copy;
  {
    std::lock_guard<std::mutex> lk(mu);
    copy = *c;
  }
  return status_json(copy, phase_of(copy));
}

json Registry::status_when_changed(const std::shared_ptr<CaseRec>& c, std::chrono::milliseconds wait,
                                   const std::string& seen_state, const std::string& seen_phase) {
  const auto until = Clock::now() + wait;
  for (;;) {
    CaseRec copy;
    std::uint64_t gen;
    {
      std::lock_guard<std::mutex> lk(mu);
      copy = *c;
      gen = generation;
    }
    const std::string phase = phase_of(copy);
    if (is_final(copy.state) || state_name(copy.state) != seen_state || phase != seen_phase)
      return status_json(copy, phase);
    std::unique_lock<std::mutex> lk(mu);
    const bool woken = changed.wait_until(lk, until, [&] { return generation != gen || stopping.load(); });
    if (!woken || stopping.load()) {
      lk.unlock();
      return status_of(c);
    }
  }
}

std::shared_ptr<CaseRec> Registry::find_case(const std::string& id) {
  {
    std::lock_guard<std::mutex> lk(mu);
    auto it = cases.find(id);
    if (it != cases.end()) return it->second;
  }
  const std::filesystem::path d = case_dir(id);
  std::optional<std::string> text;
  try {
    text = harness::case_::read_small_file(d / "status.json", kStateFileMax);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "agent: case %s: %s\n", id.c_str(), e.what());
    return nullptr;
  }
  if (!text) return nullptr;
  const json j = harness::json::parse_or_discarded(*text);
  if (!j.is_object()) {
    std::fprintf(stderr, "agent: case %s: status.json is not a JSON object\n", id.c_str());
    return nullptr;
  }
  auto c = std::make_shared<CaseRec>();
  c->id = id;
  c->dir = d;
  const auto state = parse_state(str_or(j, "state", ""));
  c->state = state && is_final(*state) ? *state : CaseState::InfraFailed;  // an earlier run's unfinished case
  c->error = str_or(j, "error", "");
  c->exit_code = j.contains("exit_code") && j["exit_code"].is_number_integer() ? j["exit_code"].get<int>() : -1;
  c->cancel_requested = j.contains("cancel_requested") && j["cancel_requested"] == true;
  if (j.contains("restoration")) c->restoration = j["restoration"];
  std::lock_guard<std::mutex> lk(mu);
  return cases.emplace(id, c).first->second;
}

void Registry::publish_final(const std::shared_ptr<CaseRec>& c, CaseState state, const std::string& error,
                             int exit_code, const json& restoration) {
  for (;;) {
    CaseRec fin;
    {
      std::lock_guard<std::mutex> lk(mu);
      fin = *c;
    }
    fin.child = ChildHandle{};
    fin.exit_code = exit_code;
    fin.restoration = restoration;
    fin.state = fin.cancel_requested ? CaseState::Cancelled : state;
    fin.error = fin.cancel_requested ? "cancelled by request" + (error.empty() ? std::string() : " (" + error + ")") : error;
    try {
      harness::case_::write_file_durably(c->dir / "status.json", dump(status_json(fin, "done"), 2) + "\n");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "agent: case %s: cannot write status.json: %s\n", c->id.c_str(), e.what());
    }
    std::lock_guard<std::mutex> lk(mu);
    if (c->cancel_requested != fin.cancel_requested) continue;  // cancelled meanwhile: write again
    c->state = fin.state;
    c->error = fin.error;
    c->exit_code = fin.exit_code;
    c->restoration = fin.restoration;
    c->child = ChildHandle{};
    if (busy.is_case(c->id)) busy = Busy{};
    bump();
    return;
  }
}

}  // namespace harness::agent
