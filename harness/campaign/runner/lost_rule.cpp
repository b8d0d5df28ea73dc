// The lost/infra rule (see lost_rule.hpp; docs/PROTOCOL.md).
#include "harness/campaign/runner/lost_rule.hpp"

#include <utility>

namespace harness::campaign {

bool pressure_started(const std::string& phase) {
  return phase == "pressure" || phase == "recovery" || phase == "restoration";
}

namespace {

/// Which evidence says the case vanished, and the message that says it; Decider::None when nothing does.
std::pair<Decider, std::string> vanished_by(const Evidence& e) {
  const std::string ms = std::to_string(e.silent_for.count());
  if (!e.boot_at_start.empty() && !e.boot_now.empty() && e.boot_now != e.boot_at_start)
    return {Decider::BootIdChanged,
            "the guest rebooted while its agent was silent (boot id " + e.boot_at_start + " -> " + e.boot_now + ")"};
  if (e.said == AgentSaid::CaseUnknown) return {Decider::CaseUnknown, e.agent_error};
  if (e.said == AgentSaid::Ended) return {Decider::Ended, e.ended_why};
  if (e.said == AgentSaid::Silent) {
    if (!pressure_started(e.phase_seen)) {
      if (e.silent_for > e.before_pressure_grace)
        return {Decider::SilenceBeforePressure,
                "agent lost: silent for " + ms + " ms before the pressure phase was seen: " + e.agent_error};
    } else if (e.liveness == GuestLiveness::Gone) {
      return {Decider::LivenessGone,
              "the engine says the guest is gone (liveness) after " + ms + " ms of agent silence: " + e.agent_error};
    } else if (e.now_unix_ns > e.deadline_unix_ns) {
      return {Decider::DeadlinePassed,
              "agent silent for " + ms + " ms and the case's deadline passed (start lead + phases + restoration "
              "timeout + " + std::to_string(e.deadline_margin_s) + " s margin): " + e.agent_error};
    }
  }
  if (e.said == AgentSaid::Returned) return {Decider::None, ""};
  if (e.now_unix_ns - e.submitted_unix_ns > static_cast<std::int64_t>(e.case_timeout_s) * 1'000'000'000LL)
    return {Decider::CaseTimeout,
            "case timed out after " + std::to_string(e.case_timeout_s) + " s (runner.case_timeout_s)"};
  return {Decider::None, ""};
}

}  // namespace

Ruling judge_vanished(const Evidence& e) {
  auto [decider, why] = vanished_by(e);
  if (decider == Decider::None) return {};
  if (e.taken_over && decider == Decider::CaseUnknown && (!e.submitted || e.phase_seen.empty()))
    // The runner died before the case reached the agent, or before any phase of it was seen,
    // and the agent does not know it: nothing of the treatment was observed, and the time
    // since submission includes the time the runner was dead, so the phase-never-seen rule
    // cannot apply (ours).
    return {Verdict::Interrupted, decider,
            std::string("the runner was interrupted ") +
                (e.submitted ? "before it saw any phase of the case, and the agent does not know it"
                             : "before the case was submitted") +
                "; taken over and run again (not counted against max_infra_retries)"};
  if (!e.phase_seen.empty())
    return {pressure_started(e.phase_seen) ? Verdict::Lost : Verdict::InfraFailed, decider, why};
  // Phase never seen (assumption, PROTOCOL.md): the time since submission decides.
  const auto since_s = (e.now_unix_ns - e.submitted_unix_ns) / 1'000'000'000LL;
  const bool lost = since_s > e.warmup_s + kStartLeadS;
  why += lost ? " (phase never seen; " : " (phase never seen; only ";
  why += std::to_string(since_s) + " s since submission, warmup + start lead = " +
         std::to_string(e.warmup_s + kStartLeadS) + " s)";
  return {lost ? Verdict::Lost : Verdict::InfraFailed, decider, why};
}

}  // namespace harness::campaign
