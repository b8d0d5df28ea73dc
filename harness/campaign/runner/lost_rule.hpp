#pragma once
// The lost/infra rule (docs/PROTOCOL.md "Case status", "A silent agent"), in one function:
// which evidence says a submitted case has vanished (the guest's boot id, the agent's
// answer, the engine's liveness, the silence, the deadlines), and then which outcome the
// phase seen gives it. Pure: the follower gathers the evidence, this decides.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace harness::campaign {

/// What the agent said of the case at the last request.
enum class AgentSaid {
  Running,     ///< answered; the case is not final yet
  Returned,    ///< answered after a silence: only the guest's boot ids are judged at that answer
  Silent,      ///< no answer (any failure but "unknown case"): a silence episode is open
  CaseUnknown, ///< 404: the agent no longer knows the case
  Ended,       ///< the case ended without an importable bundle (cancelled, no bundle): Evidence::ended_why
};

/// The guest engine's liveness answer, when it was asked (pool::Liveness in words).
enum class GuestLiveness { NotAsked, Running, Gone, Unknown };

/// Everything the rule may look at. Times are unix ns; durations ms.
struct Evidence {
  std::string phase_seen;                 ///< last phase polling saw (setup..restoration); "" = never
  std::int64_t now_unix_ns = 0;
  std::int64_t submitted_unix_ns = 0;     ///< the case's submission (the original one after a takeover)
  int warmup_s = 0;                       ///< the campaign's warmup (the phase-never-seen rule)
  AgentSaid said = AgentSaid::Running;
  std::string agent_error;                ///< the last failure's message (Silent, CaseUnknown)
  std::string ended_why;                  ///< Ended: why there is no bundle, in words
  std::chrono::milliseconds silent_for{0};        ///< Silent: length of the open episode
  std::chrono::milliseconds before_pressure_grace{60000};  ///< SilenceRules::before_pressure (at least 10 polls)
  GuestLiveness liveness = GuestLiveness::NotAsked;  ///< Silent from pressure on: the engine's answer
  std::string boot_at_start, boot_now;    ///< boot ids of the case's guest ("" = not known)
  std::int64_t deadline_unix_ns = 0;      ///< the case's own deadline (case_deadline_unix_ns)
  int deadline_margin_s = 0;              ///< SilenceRules::deadline_margin_s (named in the message)
  int case_timeout_s = 0;                 ///< runner.case_timeout_s from submission
  /// A takeover: the runner was interrupted; `submitted` says whether the row says the
  /// case was submitted before it died.
  bool taken_over = false;
  bool submitted = true;
};

/// The evidence that decided (what the follower must do for it: cancel on CaseTimeout).
enum class Decider {
  None,                   ///< nothing says the case vanished: keep following
  BootIdChanged,          ///< the guest rebooted while its agent was silent
  CaseUnknown,            ///< the agent no longer knows the case
  Ended,                  ///< the case ended without an importable bundle
  SilenceBeforePressure,  ///< silent longer than the grace before pressure was seen
  LivenessGone,           ///< from pressure on: the engine says the guest is gone
  DeadlinePassed,         ///< from pressure on: silent past the case's own deadline
  CaseTimeout,            ///< runner.case_timeout_s since submission (the runner cancels)
};

enum class Verdict {
  KeepFollowing,  ///< the case may still finish
  Lost,           ///< an outcome: vanished after the pressure phase started (never rerun)
  InfraFailed,    ///< vanished before the pressure phase: rerun while retries last
  Interrupted,    ///< a takeover of a case never seen by phase and unknown to the agent: rerun, no retry spent
};

struct Ruling {
  Verdict verdict = Verdict::KeepFollowing;
  Decider decider = Decider::None;
  std::string why;  ///< the attempt's error text ("" while KeepFollowing)
};

/// True from the pressure phase on ("pressure", "recovery", "restoration").
bool pressure_started(const std::string& phase);

/// The executor's default lead from start to T0 (harness/case/SPEC.md `--start-lead-s`), seconds.
inline constexpr int kStartLeadS = 3;

/// The rule. A silent agent alone never decides after pressure: only the liveness, a new
/// boot id or the deadline do (PROTOCOL.md). Once vanished: lost from pressure on, infra_failed
/// before it; phase never seen: lost when more than warmup + kStartLeadS seconds passed since
/// submission; a takeover whose case the agent does not know and whose phase was never seen
/// (or never submitted) is Interrupted.
Ruling judge_vanished(const Evidence& e);

}  // namespace harness::campaign
