// Degenerate input: a zero latency, a triplet missing a configuration, a single stratum, no
// complete triplet, never-completed requests (censored), TCG / infra_failed / missing cases. Each
// gives a clear error or a warning naming the case, and never a NaN or inf in a table.
#include "analysis/report/analysis_report.hpp"

#include "golden_db.hpp"

#include <gtest/gtest.h>

#include "report_checks.hpp"

#include <algorithm>
#include <stdexcept>

namespace {

bool any_contains(const std::vector<std::string>& v, const std::string& s) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& w) { return w.find(s) != std::string::npos; });
}

using report_checks::expect_no_nan;
analysis::PrimaryOptions opts() { return report_checks::small_bootstrap(); }

}  // namespace

TEST(Degenerate, ZeroLatencyExcludesTheCaseWithAWarningNamingIt) {
  auto cases = golden::two_strata_three_repeats();
  cases[2].zero_latency_request = true;  // vm0-r-1-bounded-reclaim
  const auto path = golden::written_db("zero", cases);
  const auto data = analysis::load_campaign(path);
  EXPECT_TRUE(any_contains(data.warnings, "case vm0-r-1-bounded-reclaim excluded: canary compute: 1 request(s) with response <= 0 (first seq 51)"))
      << (data.warnings.empty() ? "" : data.warnings[0]);
  const auto ts = analysis::build_triplets(data);
  EXPECT_EQ(ts.triplets.size(), 5u);
  EXPECT_TRUE(any_contains(ts.warnings, "triplet vm0/r/1 excluded from the paired analysis for a recording error: case vm0-r-1-bounded-reclaim unusable"));
  ASSERT_EQ(ts.excluded.size(), 1u);
  const auto r = analysis::build_analysis_report(data, ts, analysis::run_primary(ts, opts()));
  EXPECT_TRUE(any_contains(r.warnings, "vm0-r-1-bounded-reclaim excluded"));
  expect_no_nan(r);
}

TEST(Degenerate, TripletMissingAConfigurationIsIncompleteAndNamed) {
  auto cases = golden::two_strata_three_repeats();
  cases.erase(cases.begin() + 1);  // vm0/r/1 delayed-activation
  const auto path = golden::written_db("missing_conf", cases);
  const auto data = analysis::load_campaign(path);
  const auto ts = analysis::build_triplets(data);
  EXPECT_EQ(ts.triplets.size(), 5u);
  EXPECT_TRUE(any_contains(ts.warnings, "triplet vm0/r/1 incomplete (a member never ran): delayed-activation (no case record, not in the schedule)"));
  ASSERT_EQ(ts.incomplete.size(), 1u);
  expect_no_nan(analysis::build_analysis_report(data, ts, analysis::run_primary(ts, opts())));
}

TEST(Degenerate, SingleStratumWarnsAndStillEstimates) {
  std::vector<golden::Case> cases;
  for (auto& c : golden::two_strata_three_repeats())
    if (c.vm == "vm0") cases.push_back(c);
  const auto path = golden::written_db("single", cases);
  const auto data = analysis::load_campaign(path);
  const auto ts = analysis::build_triplets(data);
  EXPECT_EQ(ts.strata.size(), 1u);
  EXPECT_TRUE(any_contains(ts.warnings, "only one (vm, regime) stratum"));
  const auto pr = analysis::run_primary(ts, opts());
  EXPECT_TRUE(std::isfinite(pr.comparisons[0].estimate));
  EXPECT_LE(pr.comparisons[0].lower, pr.comparisons[0].estimate);
  EXPECT_GE(pr.comparisons[0].upper, pr.comparisons[0].estimate);
  expect_no_nan(analysis::build_analysis_report(data, ts, pr));
}

TEST(Degenerate, NoCompleteTripletIsAClearError) {
  std::vector<golden::Case> cases{{"vm0", "r", 1, "static-zram", 10000, 20000}, {"vm0", "r", 1, "bounded-reclaim", 9000, 19000}};
  const auto path = golden::written_db("none", cases);
  try {
    analysis::analyze_campaign(path, opts());
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("no complete matched triplet"), std::string::npos) << m;
    EXPECT_NE(m.find("incomplete (a member never ran): delayed-activation"), std::string::npos) << m;
  }
}

TEST(Degenerate, NeverCompletedRequestsAreCensoredLowerBoundsAndTheTripletStays) {
  auto cases = golden::two_strata_three_repeats();
  cases[0].null_completions = 1;  // vm0-r-1-static-zram: request 0 (value 1 unit) never completed
  cases[3].null_completions = 2;  // vm1-r-1-static-zram: requests 0 and 1 (values 1, 38 units)
  const auto path = golden::written_db("null", cases);
  const auto data = analysis::load_campaign(path);
  auto get = [&](const std::string& id) -> const analysis::LatencySummary& {
    return *std::find_if(data.cases.begin(), data.cases.end(), [&](const auto& c) { return c.case_id == id; })->latency[0];
  };
  const auto& c0 = get("vm0-r-1-static-zram");
  EXPECT_EQ(c0.incomplete, 1u);
  EXPECT_EQ(c0.censored, 1u);
  EXPECT_FALSE(c0.truncated);
  EXPECT_EQ(c0.deadline_misses, 1u);
  // Completed values 2..101 units (unit 100 us) plus one censored value 21.1 s - 10 s = 11.1 s on
  // top: x[99] = 101 units = 10100 us, a lower bound.
  EXPECT_DOUBLE_EQ(c0.p99_us, 10100.0);
  EXPECT_TRUE(c0.p99_flagged());
  // Two censored (11.1 s, 11.0 s) above 99 completed values: x[99] = 11.0 s.
  EXPECT_DOUBLE_EQ(get("vm1-r-1-static-zram").p99_us, 11'000'000.0);
  EXPECT_TRUE(any_contains(data.warnings, "case vm0-r-1-static-zram canary compute: 1 of 101 pressure-phase request(s) censored (1 never completed, 0 missing"));
  const auto ts = analysis::build_triplets(data);
  EXPECT_EQ(ts.triplets.size(), 6u);  // no triplet dropped for its outcome
  EXPECT_TRUE(ts.excluded.empty());
  expect_no_nan(analysis::build_analysis_report(data, ts, analysis::run_primary(ts, opts())));
}

TEST(Degenerate, TcgInfraFailedAndMissingCasesAreWarnedOnTop) {
  auto cases = golden::two_strata_three_repeats();
  cases[4].accelerator = "tcg";
  cases.push_back({"vm1", "r", 9, "static-zram", 1, 1, "infra_failed"});
  const auto path = golden::written_db("warn", cases, {"never-ran-case"});
  const auto r = analysis::analyze_campaign(path, opts());
  EXPECT_TRUE(any_contains(r.warnings, "1 case(s) ran under TCG"));
  EXPECT_TRUE(any_contains(r.warnings, "timings are inflated under TCG"));
  EXPECT_TRUE(any_contains(r.warnings, "and not analysed: vm1-r-9-static-zram"));
  EXPECT_TRUE(any_contains(r.warnings, "have no case record (missing): never-ran-case"));
  // An unfinished campaign says so, counting the records (the infra_failed one included), and
  // which tables use complete blocks only.
  EXPECT_TRUE(any_contains(r.warnings, "CAMPAIGN NOT COMPLETE: 19 of 20 scheduled case(s) have a record (1 have none"));
  EXPECT_TRUE(any_contains(r.warnings, "use the 6 complete triplet(s) only"));
  const std::string md = analysis::render_markdown(r);
  EXPECT_LT(md.find("## Warnings"), md.find("Table 4"));
}
