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
#include "analysis/compare/regression.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "results/db.hpp"
#include "results/provenance.hpp"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace harness::campaign {

/// What ran one case (cases table): for JUnit properties and the check printout.
struct CaseRun {
  std::string case_id;
  std::string kernel_release;   ///< uname -r of the guest ("" = not recorded)
  std::string accelerator;      ///< kvm | tcg | real | unknown ("" = not recorded)
  std::string source_commit;    ///< harness build that ran the case, "+dirty" appended when dirty
  std::optional<std::int64_t> started_unix_ns, ended_unix_ns;  ///< wall clock, ns since the epoch
  int attempt = 0;              ///< attempt number of the imported bundle
};

/// One case's measured value for one assertion.
struct Measurement {
  std::string case_id;
  std::string quantity;          ///< e.g. "achieved_ratio", "reclaim_s", "trigger_after_s", "compute_p99_ms"
  std::optional<double> value;   ///< in `unit`; nullopt = not measured
  std::string unit;              ///< "ratio", "s", "ms", "count", "state", "clean"
  bool passed = false;
  std::string detail;            ///< one line with the numbers and the bound, e.g.
                                 ///< "c1: achieved 0.930 of the request (>= 0.8 needed)"
};

struct AssertionResult {
  std::string name;                   ///< e.g. "reclaim_achieved_ratio >= 0.8"
  bool passed = false;
  std::vector<std::string> failures;  ///< one line per offending case (empty when passed)
  int cases_checked = 0;
  std::vector<Measurement> measured;  ///< every checked case's value, passing ones too
  std::vector<CaseRun> runs;          ///< what ran the checked cases (kernel, accelerator, commit, times)
};

/// One line summing up an assertion (ours, issue 59: `harness check` prints this instead of every
/// case): "PASS  trigger_within_s <= 30  (12 case(s); trigger_after_s 4 to 9 s)" or
/// "FAIL  reclaim_achieved_ratio >= 0.8  (6 case(s), 2 failed; achieved_ratio 0.61 to 0.93)":
/// per measured quantity its lowest and highest value in its unit (none for states and
/// clean/unclean), and how many cases did not measure it.
std::string assertion_summary(const AssertionResult& r);

/// Evaluates every assertion of `c` over `db`. Never throws for missing data: a case
/// lacking the rows an assertion needs is a failure of that assertion. `not_run`: schedule
/// case ids this check deliberately did not run (`harness check --baseline-db`: the
/// baseline cases); all_cases_completed does not count them.
std::vector<AssertionResult> evaluate_assertions(results::Db& db, const Campaign& c,
                                                 const std::set<std::string>& not_run = {});

/// JUnit XML: one <testsuite name=campaign timestamp=...>, one <testcase> per assertion
/// with <properties> (harness version and commit, plan SHA-256, command line, and the
/// kernel(s), accelerator(s), case commit(s) and first start / last end (UTC) of its
/// cases), <failure> whose message and body carry the measured numbers and the bound, and
/// <system-out> listing every checked case: kernel, accelerator, commit, start..end and
/// its measured value. `prov` (results/provenance.hpp; nullable) supplies the build, plan
/// and command line; a synthetic DB's file (prov->synthetic) has a comment with
/// results::synthetic_banner() on its first line, after the XML declaration, and every testcase
/// a property `synthetic`.
/// `metrics` (A/B campaigns, analysis/compare/regression.hpp; nullable): one more <testcase> per
/// metric (classname `<suite>.regression`, name = the metric), with properties (pairs,
/// strata, means, ratio, interval, level, tolerance, verdict) and the detail line in
/// <system-out>; verdict "regression" -> <failure> whose message carries ratio, interval,
/// level, tolerance and pairs; "no data" -> <skipped> with the reason; "inconclusive" ->
/// <skipped> whose message starts "inconclusive: " (not decided: the check exits 5, so the
/// report must not show the metric as passed); "ok" and "reported" -> passed. `extra` (nullable): further testcases (JUnitExtraCase), after the
/// metrics. Throws std::runtime_error if `path` cannot be written.
/// A further <testcase> of the JUnit file (e.g. the A/B environment comparison): classname
/// `<suite>.<classname_suffix>`, its properties in order, <system-out>, and an <error> (could
/// not judge: counted in the suite's errors) or a <failure> when not empty.
struct JUnitExtraCase {
  std::string classname_suffix, name;
  std::vector<std::pair<std::string, std::string>> properties;
  std::string system_out;
  std::string error, failure;
};

void write_junit(const std::string& path, const std::string& suite, const std::vector<AssertionResult>& results,
                 const results::Provenance* prov = nullptr,
                 const std::vector<analysis::MetricComparison>* metrics = nullptr,
                 const std::vector<JUnitExtraCase>* extra = nullptr);

}  // namespace harness::campaign
