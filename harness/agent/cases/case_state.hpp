#pragma once
// The case state machine of the agent (harness/agent/API.md "A case's states"): a case's
// typed state, the record the agent keeps of it, its status answer, and the typed busy
// slot that says what holds the VM.
//
//   queued -> qualifying -> running -> finishing -> completed | lost | infra_failed | cancelled
//   queued | qualifying -> cancelled | infra_failed   (the executor never started)
#include "harness/agent/cases/child.hpp"

#include <nlohmann/json.hpp>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace harness::agent {

/// A case's state (API.md "A case's states"). Completed, Lost and InfraFailed are the
/// bundle's cases.status; Cancelled is the agent's.
enum class CaseState { Queued, Qualifying, Running, Finishing, Completed, Lost, InfraFailed, Cancelled };

/// The wire name of `s`: "queued", "qualifying", "running", "finishing", "completed",
/// "lost", "infra_failed", "cancelled".
std::string_view state_name(CaseState s);

/// The state named `name` (state_name's inverse), or nullopt for any other text.
std::optional<CaseState> parse_state(std::string_view name);

/// True for the four final states (nothing changes a final case).
bool is_final(CaseState s);

/// The case state a bundle's cases.status stands for: completed and lost are themselves,
/// anything else (a failure before the pressure phase, an unknown word) is InfraFailed.
CaseState state_of_bundle_status(std::string_view status);

/// What holds the VM's one busy slot: nothing, a case (from its submission to its final
/// state), a qualification (GET /v1/qualification), the reboot, or the executor of an
/// earlier agent run whose process group still lives (restart_settling.hpp).
struct Busy {
  enum class Holder { Idle, Case, Qualification, Reboot, OldExecutor };
  Holder holder = Holder::Idle;
  std::string case_id;  ///< Case and OldExecutor: the case
  pid_t pgid = -1;      ///< OldExecutor: its process group

  bool idle() const { return holder == Holder::Idle; }
  /// True when a case is the holder and its id is `id`.
  bool is_case(const std::string& id) const { return holder == Holder::Case && case_id == id; }
  /// "busy: case X is running", "busy: a qualification is running", "busy: the VM is about
  /// to reboot", "busy: the executor of case X from an earlier agent run (process group N)
  /// is still running ..."; "" when idle.
  std::string message() const;
  /// The `running_case_id` of a 409 answer: the case's id, or "(qualification)" /
  /// "(reboot)" (API.md; as before the slot was typed).
  std::string holder_id() const;
};

using Clock = std::chrono::steady_clock;

/// A case known to the agent (in memory; its final state also in cases/<id>/status.json).
struct CaseRec {
  std::string id;
  CaseState state = CaseState::Queued;
  std::string error;  ///< "" = null
  std::filesystem::path dir;  ///< <state-dir>/cases/<id>
  ChildHandle child;  ///< pid > 0 while the agent may signal the executor (child.hpp)
  int exit_code = -1;  ///< -1 = not exited (null)
  bool cancel_requested = false;
  Clock::time_point kill_at{};  ///< a cancel's SIGKILL deadline
  int grace_s = 60;             ///< SIGTERM -> SIGKILL of a cancel, s
  nlohmann::json restoration = nullptr;  ///< {"clean", "problems", "ran"} once the bundle is read
};

/// The case's bundle: <dir>/out/<id>.db.
std::filesystem::path bundle_path(const CaseRec& c);

/// The phase of `c` (a copy; reads <dir>/out/phase without any lock): "setup" while queued
/// or qualifying, the executor's word while running (setup, warmup, pressure, recovery,
/// restoration; anything else or an unreadable file reads "setup"), "done" from finishing on.
std::string phase_of(const CaseRec& c);

/// The status answer of `c` with `phase` (API.md: case_id, state, phase, error, exit_code,
/// cancel_requested, restoration).
nlohmann::json status_json(const CaseRec& c, const std::string& phase);

}  // namespace harness::agent
