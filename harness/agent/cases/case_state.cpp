// The case state machine of the agent (see case_state.hpp).
#include "harness/agent/cases/case_state.hpp"

#include "harness/case/run/durable_file.hpp"

#include <array>
#include <utility>

namespace harness::agent {
namespace {

constexpr std::array<std::pair<CaseState, std::string_view>, 8> kNames{{
    {CaseState::Queued, "queued"},
    {CaseState::Qualifying, "qualifying"},
    {CaseState::Running, "running"},
    {CaseState::Finishing, "finishing"},
    {CaseState::Completed, "completed"},
    {CaseState::Lost, "lost"},
    {CaseState::InfraFailed, "infra_failed"},
    {CaseState::Cancelled, "cancelled"},
}};

}  // namespace

std::string_view state_name(CaseState s) {
  for (const auto& [state, name] : kNames)
    if (state == s) return name;
  return "infra_failed";  // unreachable: every enumerator is in kNames
}

std::optional<CaseState> parse_state(std::string_view name) {
  for (const auto& [state, n] : kNames)
    if (n == name) return state;
  return std::nullopt;
}

bool is_final(CaseState s) {
  return s == CaseState::Completed || s == CaseState::Lost || s == CaseState::InfraFailed || s == CaseState::Cancelled;
}

CaseState state_of_bundle_status(std::string_view status) {
  if (status == "completed") return CaseState::Completed;
  if (status == "lost") return CaseState::Lost;
  return CaseState::InfraFailed;
}

std::string Busy::message() const {
  switch (holder) {
    case Holder::Idle: return "";
    case Holder::Case: return "busy: case " + case_id + " is running";
    case Holder::Qualification: return "busy: a qualification is running";
    case Holder::Reboot: return "busy: the VM is about to reboot";
    case Holder::OldExecutor:
      return "busy: the executor of case " + case_id + " from an earlier agent run (process group " +
             std::to_string(pgid) + ") is still running; no case starts until that process group has ended";
  }
  return "";
}

std::string Busy::holder_id() const {
  switch (holder) {
    case Holder::Qualification: return "(qualification)";
    case Holder::Reboot: return "(reboot)";
    default: return case_id;
  }
}

std::filesystem::path bundle_path(const CaseRec& c) { return c.dir / "out" / (c.id + ".db"); }

std::string phase_of(const CaseRec& c) {
  if (c.state == CaseState::Queued || c.state == CaseState::Qualifying) return "setup";
  if (c.state != CaseState::Running) return "done";
  std::string p;
  try {
    p = harness::case_::read_small_file(c.dir / "out" / "phase", 64).value_or("");
  } catch (const std::exception&) {
    p = "";  // unreadable: reported as setup (the phase is for display, never judged)
  }
  while (!p.empty() && (p.back() == '\n' || p.back() == ' ')) p.pop_back();
  for (const char* k : {"setup", "warmup", "pressure", "recovery", "restoration", "done"})
    if (p == k) return p;
  return "setup";
}

nlohmann::json status_json(const CaseRec& c, const std::string& phase) {
  using nlohmann::json;
  return json{{"case_id", c.id},
              {"state", std::string(state_name(c.state))},
              {"phase", phase},
              {"error", c.error.empty() ? json(nullptr) : json(c.error)},
              {"exit_code", c.exit_code < 0 ? json(nullptr) : json(c.exit_code)},
              {"cancel_requested", c.cancel_requested},
              {"restoration", c.restoration}};
}

}  // namespace harness::agent
