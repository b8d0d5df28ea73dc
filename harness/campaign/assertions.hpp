#pragma once
// CI assertions (`harness check`): evaluated over a campaign DB after the run.
//
// Kinds (campaign YAML `assertions:`):
//   all_cases_completed        every scheduled case has state completed
//   reclaim_achieved_ratio min every completed bounded-reclaim case has a reclaim action with
//                              achieved_bytes / requested_bytes >= min (study: 0.8)
//   reclaim_duration_s max     every reclaim action's write took <= max seconds (study: 1 s)
//   trigger_within_s max       every completed case fired (trigger, or would_trigger for
//                              static-zram) within max s of the pressure phase start
//   restoration_clean          every completed case has restoration.clean = 1
//   no_foreground_oom          no completed case shows fg oom_kill > 0 in memory.events
//                              telemetry (and the counter was measured)
//   canary_p99_ms max          pressure-phase p99 response time (Hyndman-Fan type 7) of each
//                              canary in each completed case <= max milliseconds
#include "harness/campaign/campaign.hpp"
#include "results/db.hpp"

#include <string>
#include <vector>

namespace harness::campaign {

struct AssertionResult {
  std::string name;                   ///< e.g. "reclaim_achieved_ratio >= 0.8"
  bool passed = false;
  std::vector<std::string> failures;  ///< one line per offending case (empty when passed)
  int cases_checked = 0;
};

/// Evaluates every assertion of `c` over `db`. Never throws for missing data: a case
/// lacking the rows an assertion needs is a failure of that assertion.
std::vector<AssertionResult> evaluate_assertions(results::Db& db, const Campaign& c);

/// JUnit XML: one <testsuite name=campaign>, one <testcase> per assertion, <failure> with
/// the offending cases. Throws std::runtime_error if `path` cannot be written.
void write_junit(const std::string& path, const std::string& suite, const std::vector<AssertionResult>& results);

}  // namespace harness::campaign
