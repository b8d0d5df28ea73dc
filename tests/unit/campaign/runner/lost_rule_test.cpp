// The lost/infra rule (harness/campaign/runner/lost_rule.hpp) against every row of
// docs/PROTOCOL.md's rule ("Case status", the phase-never-seen assumption, "A silent agent",
// the takeover of an interrupted runner), as a table: the evidence, then the verdict, the
// evidence that decided and a piece of the message.
#include "harness/campaign/runner/lost_rule.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace {

using harness::campaign::AgentSaid;
using harness::campaign::Decider;
using harness::campaign::Evidence;
using harness::campaign::GuestLiveness;
using harness::campaign::judge_vanished;
using harness::campaign::Verdict;
using ::testing::HasSubstr;

constexpr std::int64_t kS = 1'000'000'000LL;

/// A case submitted at t = 1000 s, warmup 10 s, timeout 600 s, deadline at 1500 s, asked at
/// 1020 s: 20 s since submission (more than warmup + start lead = 13 s).
Evidence base() {
  Evidence e;
  e.submitted_unix_ns = 1000 * kS;
  e.now_unix_ns = 1020 * kS;
  e.warmup_s = 10;
  e.case_timeout_s = 600;
  e.deadline_unix_ns = 1500 * kS;
  e.deadline_margin_s = 300;
  e.before_pressure_grace = std::chrono::milliseconds(60000);
  e.agent_error = "agent at http://x unreachable (timed out)";
  return e;
}

struct Row {
  const char* protocol_row;  ///< the rule's row, in words
  std::function<void(Evidence&)> given;
  Verdict verdict;
  Decider decider;
  const char* says;  ///< a piece of the message ("" while following)
};

const std::vector<Row>& rows() {
  static const std::vector<Row> r = {
      {"an answering agent, case not final: keep following", [](Evidence& e) { e.phase_seen = "pressure"; },
       Verdict::KeepFollowing, Decider::None, ""},
      {"case unknown to the agent after pressure started: lost",
       [](Evidence& e) {
         e.phase_seen = "pressure";
         e.said = AgentSaid::CaseUnknown;
         e.agent_error = "agent no longer knows the case (guest restarted?): 404";
       },
       Verdict::Lost, Decider::CaseUnknown, "agent no longer knows the case"},
      {"case unknown to the agent in warmup: infra_failed",
       [](Evidence& e) {
         e.phase_seen = "warmup";
         e.said = AgentSaid::CaseUnknown;
         e.agent_error = "agent no longer knows the case (guest restarted?): 404";
       },
       Verdict::InfraFailed, Decider::CaseUnknown, "agent no longer knows the case"},
      {"recovery and restoration count as after pressure",
       [](Evidence& e) {
         e.phase_seen = "restoration";
         e.said = AgentSaid::Ended;
         e.ended_why = "agent reports the case cancelled";
       },
       Verdict::Lost, Decider::Ended, "agent reports the case cancelled"},
      {"no bundle from a case seen in setup: infra_failed",
       [](Evidence& e) {
         e.phase_seen = "setup";
         e.said = AgentSaid::Ended;
         e.ended_why = "agent: infra_failed without a bundle";
       },
       Verdict::InfraFailed, Decider::Ended, "infra_failed without a bundle"},
      {"phase never seen, more than warmup + start lead since submission: lost",
       [](Evidence& e) {
         e.said = AgentSaid::CaseUnknown;
         e.agent_error = "gone";
       },
       Verdict::Lost, Decider::CaseUnknown, "gone (phase never seen; 20 s since submission, warmup + start lead = 13 s)"},
      {"phase never seen, within warmup + start lead: infra_failed",
       [](Evidence& e) {
         e.now_unix_ns = 1013 * kS;
         e.said = AgentSaid::CaseUnknown;
         e.agent_error = "gone";
       },
       Verdict::InfraFailed, Decider::CaseUnknown, "(phase never seen; only 13 s since submission"},
      {"silent before pressure, within the grace: keep following",
       [](Evidence& e) {
         e.phase_seen = "warmup";
         e.said = AgentSaid::Silent;
         e.silent_for = std::chrono::milliseconds(60000);
       },
       Verdict::KeepFollowing, Decider::None, ""},
      {"silent before pressure, longer than the grace: vanished, infra_failed",
       [](Evidence& e) {
         e.phase_seen = "warmup";
         e.said = AgentSaid::Silent;
         e.silent_for = std::chrono::milliseconds(60001);
       },
       Verdict::InfraFailed, Decider::SilenceBeforePressure, "agent lost: silent for 60001 ms before the pressure"},
      {"silent from pressure on, guest running, before the deadline: never a silent network alone",
       [](Evidence& e) {
         e.phase_seen = "pressure";
         e.said = AgentSaid::Silent;
         e.silent_for = std::chrono::milliseconds(400000);
         e.liveness = GuestLiveness::Running;
       },
       Verdict::KeepFollowing, Decider::None, ""},
      {"silent from pressure on, the engine cannot tell: keep asking until the deadline",
       [](Evidence& e) {
         e.phase_seen = "pressure";
         e.said = AgentSaid::Silent;
         e.silent_for = std::chrono::milliseconds(400000);
         e.liveness = GuestLiveness::NotAsked;
       },
       Verdict::KeepFollowing, Decider::None, ""},
      {"silent from pressure on, the engine says the guest is gone: lost",
       [](Evidence& e) {
         e.phase_seen = "pressure";
         e.said = AgentSaid::Silent;
         e.silent_for = std::chrono::milliseconds(5000);
         e.liveness = GuestLiveness::Gone;
       },
       Verdict::Lost, Decider::LivenessGone, "the engine says the guest is gone (liveness) after 5000 ms"},
      {"silent from pressure on past the case's deadline: lost",
       [](Evidence& e) {
         e.phase_seen = "recovery";
         e.said = AgentSaid::Silent;
         e.silent_for = std::chrono::milliseconds(5000);
         e.liveness = GuestLiveness::Unknown;
         e.now_unix_ns = 1501 * kS;
       },
       Verdict::Lost, Decider::DeadlinePassed, "the case's deadline passed (start lead + phases + restoration "
                                               "timeout + 300 s margin)"},
      {"the agent answers again on another boot: the guest rebooted, lost from pressure on",
       [](Evidence& e) {
         e.phase_seen = "pressure";
         e.said = AgentSaid::Returned;
         e.boot_at_start = "boot-1";
         e.boot_now = "boot-2";
       },
       Verdict::Lost, Decider::BootIdChanged, "rebooted while its agent was silent (boot id boot-1 -> boot-2)"},
      {"the agent answers again on another boot in warmup: infra_failed",
       [](Evidence& e) {
         e.phase_seen = "warmup";
         e.said = AgentSaid::Returned;
         e.boot_at_start = "boot-1";
         e.boot_now = "boot-2";
       },
       Verdict::InfraFailed, Decider::BootIdChanged, "boot id boot-1 -> boot-2"},
      {"the agent answers again on the same boot: keep following (even past the timeout)",
       [](Evidence& e) {
         e.phase_seen = "pressure";
         e.said = AgentSaid::Returned;
         e.boot_at_start = "boot-1";
         e.boot_now = "boot-1";
         e.now_unix_ns = 1700 * kS;
       },
       Verdict::KeepFollowing, Decider::None, ""},
      {"a boot id not known on either side decides nothing",
       [](Evidence& e) {
         e.phase_seen = "pressure";
         e.said = AgentSaid::Returned;
         e.boot_now = "boot-2";
       },
       Verdict::KeepFollowing, Decider::None, ""},
      {"runner.case_timeout_s passed while the agent answers: vanished by the phase",
       [](Evidence& e) {
         e.phase_seen = "pressure";
         e.now_unix_ns = 1601 * kS;
       },
       Verdict::Lost, Decider::CaseTimeout, "case timed out after 600 s (runner.case_timeout_s)"},
      {"runner.case_timeout_s passed while silent before pressure (within the grace)",
       [](Evidence& e) {
         e.phase_seen = "setup";
         e.said = AgentSaid::Silent;
         e.silent_for = std::chrono::milliseconds(1000);
         e.now_unix_ns = 1601 * kS;
       },
       Verdict::InfraFailed, Decider::CaseTimeout, "case timed out after 600 s"},
      {"takeover: the agent does not know a case whose phase was seen: decided by that phase",
       [](Evidence& e) {
         e.taken_over = true;
         e.phase_seen = "pressure";
         e.said = AgentSaid::CaseUnknown;
         e.agent_error = "taken over after the runner was interrupted: the agent no longer knows the case";
       },
       Verdict::Lost, Decider::CaseUnknown, "taken over after the runner was interrupted"},
      {"takeover: submitted, no phase seen, unknown to the agent: interrupted (rerun, no retry spent)",
       [](Evidence& e) {
         e.taken_over = true;
         e.said = AgentSaid::CaseUnknown;
       },
       Verdict::Interrupted, Decider::CaseUnknown,
       "the runner was interrupted before it saw any phase of the case, and the agent does not know it"},
      {"takeover: never submitted, unknown to the agent: interrupted",
       [](Evidence& e) {
         e.taken_over = true;
         e.submitted = false;
         e.phase_seen = "warmup";
         e.said = AgentSaid::CaseUnknown;
       },
       Verdict::Interrupted, Decider::CaseUnknown, "before the case was submitted; taken over and run again"},
  };
  return r;
}

TEST(LostRule, EveryRowOfTheProtocol) {
  for (const auto& row : rows()) {
    Evidence e = base();
    row.given(e);
    const auto r = judge_vanished(e);
    EXPECT_EQ(r.verdict, row.verdict) << row.protocol_row;
    EXPECT_EQ(r.decider, row.decider) << row.protocol_row;
    if (row.says[0]) EXPECT_THAT(r.why, HasSubstr(row.says)) << row.protocol_row;
    else EXPECT_EQ(r.why, "") << row.protocol_row;
  }
}

TEST(LostRule, PressureStartsAtPressure) {
  using harness::campaign::pressure_started;
  for (const char* p : {"", "setup", "warmup", "done"}) EXPECT_FALSE(pressure_started(p)) << p;
  for (const char* p : {"pressure", "recovery", "restoration"}) EXPECT_TRUE(pressure_started(p)) << p;
}

}  // namespace
