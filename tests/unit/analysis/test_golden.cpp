// Hand-computed golden dataset: point estimates exact, interval bounds exact (the bootstrap
// distribution is discrete and known), the verdict right. Design: stratum vm0/r with 2 triplets,
// stratum vm1/r with 1 triplet (warned), p99 values chosen by hand (us):
//
//   triplet   compute S / D / R      sqlite S / D / R
//   vm0/r/1    10000 20000  8000      30000 40000 24000
//   vm0/r/2    10000 16000  9000      20000 30000 18000
//   vm1/r/1    12000 15000  6000      10000 25000  5000
//
// compute/static: ratios .8, .9 | .5 -> exp((ln(.8 x .9)/2 + ln .5)/2) = .72^(1/4) x .5^(1/2)
#include "analysis/report/analysis_report.hpp"
#include "analysis/tables/primary.hpp"

#include "golden_db.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

std::vector<golden::Case> golden_cases(double sqlite_reclaim_scale = 1.0) {
  std::vector<golden::Case> v;
  auto add = [&](const char* vm, int rep, double cs, double cd, double cr, double ss, double sd, double sr) {
    v.push_back({vm, "r", rep, "static-zram", cs, ss});
    v.push_back({vm, "r", rep, "delayed-activation", cd, sd});
    v.push_back({vm, "r", rep, "bounded-reclaim", cr, sr * sqlite_reclaim_scale});
  };
  add("vm0", 1, 10000, 20000, 8000, 30000, 40000, 24000);
  add("vm0", 2, 10000, 16000, 9000, 20000, 30000, 18000);
  add("vm1", 1, 12000, 15000, 6000, 10000, 25000, 5000);
  return v;
}

}  // namespace

TEST(Golden, CaseP99IsTypeSevenOfPressurePhaseOnly) {
  const auto path = golden::written_db("golden_p99", golden_cases());
  const auto data = analysis::load_campaign(path);
  ASSERT_EQ(data.cases.size(), 9u);
  for (const auto& c : data.cases) {
    ASSERT_TRUE(c.latency[0]);
    EXPECT_EQ(c.latency[0]->requests, 101u) << c.case_id;  // warmup/recovery requests excluded
  }
  const auto& c0 = data.cases.front();  // sorted by case_id: vm0-r-1-bounded-reclaim
  EXPECT_EQ(c0.case_id, "vm0-r-1-bounded-reclaim");
  EXPECT_DOUBLE_EQ(c0.latency[0]->p99_us, 8000.0);
  EXPECT_DOUBLE_EQ(c0.latency[1]->p99_us, 24000.0);
  EXPECT_DOUBLE_EQ(c0.latency[0]->p50_us, 80.0 * 51);  // h = 50 -> value 51 x 80 us
  EXPECT_EQ(c0.latency[0]->deadline_misses, 0u);
}

TEST(Golden, PointEstimatesIntervalsAndVerdictByHand) {
  const auto path = golden::written_db("golden", golden_cases());
  const auto data = analysis::load_campaign(path);
  const auto ts = analysis::build_triplets(data);
  ASSERT_EQ(ts.triplets.size(), 3u);
  ASSERT_EQ(ts.strata.size(), 2u);
  analysis::PrimaryOptions opt;
  opt.bootstrap = {10000, 7, 2};
  const auto pr = analysis::run_primary(ts, opt);
  const double expect[4] = {std::pow(0.72, 0.25) * std::sqrt(0.5),             // compute/static
                            std::pow(0.4 * 0.5625, 0.25) * std::sqrt(0.4),     // compute/delayed
                            std::pow(0.72, 0.25) * std::sqrt(0.5),             // sqlite/static
                            std::pow(0.36, 0.25) * std::sqrt(0.2)};            // sqlite/delayed
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(pr.comparisons[j].estimate, expect[j], 1e-12) << j;
  EXPECT_NEAR(pr.comparisons[0].estimate, 0.651356, 1e-6);  // written out by hand
  // Stratum vm0/r resamples {d1,d1}, {d1,d2}, {d2,d2} with probabilities 1/4, 1/2, 1/4; vm1/r is fixed.
  // With B = 10000 about 2500 replicates sit at each extreme, so the 0.625% and 99.375% type-7
  // quantiles are the extremes: compute/static [sqrt(.8 x .5), sqrt(.9 x .5)].
  EXPECT_NEAR(pr.comparisons[0].lower, std::sqrt(0.4), 1e-12);
  EXPECT_NEAR(pr.comparisons[0].upper, std::sqrt(0.45), 1e-12);
  EXPECT_NEAR(pr.comparisons[3].lower, std::sqrt(0.6 * 0.2), 1e-12);  // both vm0 ratios are .6: degenerate
  EXPECT_NEAR(pr.comparisons[3].upper, std::sqrt(0.6 * 0.2), 1e-12);
  EXPECT_NEAR(pr.level, 0.9875, 1e-15);
  EXPECT_TRUE(pr.verdict.general_benefit) << pr.verdict.text;
  EXPECT_TRUE(pr.verdict.harm.empty());
  // Absolute p99 difference compute/static: vm0 mean(-2000, -1000) = -1500; vm1 -6000 -> -3750 us.
  EXPECT_EQ(pr.abs_diffs[1].quantile, "p99");
  EXPECT_NEAR(pr.abs_diffs[1].estimate_us, -3750.0, 1e-9);
  // One-triplet stratum warned.
  bool warned = false;
  for (const auto& w : ts.warnings) warned |= w.find("1 of 2 strata have one triplet (vm1/r)") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(Golden, HarmAndNoBenefitWhenSqliteReclaimIsTenPercentSlower) {
  // sqlite reclaim p99 x 1.1 relative to static: ratios reclaim/static = .8 x 1.1 ... -> sqlite/static
  // estimate .72^(1/4) .5^(1/2) x 1.1 = 0.7165 (< 1, no harm). Make it clearly harmful instead:
  // scale 2.5 -> ratios 2.0, 2.25 | 1.25 -> all > 1.
  const auto path = golden::written_db("golden_harm", golden_cases(2.5));
  const auto data = analysis::load_campaign(path);
  const auto ts = analysis::build_triplets(data);
  analysis::PrimaryOptions opt;
  opt.bootstrap = {4000, 3, 1};
  const auto pr = analysis::run_primary(ts, opt);
  EXPECT_NEAR(pr.comparisons[2].estimate, std::pow(2.0 * 2.25, 0.25) * std::sqrt(1.25), 1e-12);
  EXPECT_NEAR(pr.comparisons[2].lower, std::sqrt(2.0 * 1.25), 1e-12);
  EXPECT_FALSE(pr.verdict.general_benefit);
  ASSERT_EQ(pr.verdict.harm.size(), 1u);
  EXPECT_EQ(pr.verdict.harm[0], "sqlite: bounded-reclaim / static-zram");
  EXPECT_NE(pr.verdict.text.find("NO GENERAL RESPONSIVENESS BENEFIT"), std::string::npos);
  EXPECT_NE(pr.verdict.text.find("HARM detected for: sqlite: bounded-reclaim / static-zram"), std::string::npos);
}

TEST(Golden, VerdictRuleBoundaries) {
  using analysis::RatioInterval;
  // Estimate exactly 0.95 passes (<= 0.95); 0.951 fails; upper exactly 1 fails (< 1 required).
  std::array<RatioInterval, 4> c{{{"a", 0.95, 0.9, 0.99}, {"b", 0.7, 0.6, 0.8}, {"c", 0.8, 0.7, 0.9}, {"d", 0.5, 0.4, 0.6}}};
  EXPECT_TRUE(analysis::decide(c).general_benefit);
  c[0].estimate = 0.951;
  EXPECT_FALSE(analysis::decide(c).general_benefit);
  c[0].estimate = 0.9;
  c[0].upper = 1.0;
  auto v = analysis::decide(c);
  EXPECT_FALSE(v.general_benefit);
  ASSERT_EQ(v.failed.size(), 1u);
  EXPECT_NE(v.failed[0].find("a: upper bound 1.000 >= 1"), std::string::npos);
  c[3] = {"d", 1.2, 1.0, 1.3};  // lower == 1: not wholly above 1
  EXPECT_TRUE(analysis::decide(c).harm.empty());
  c[3].lower = 1.01;
  EXPECT_EQ(analysis::decide(c).harm.size(), 1u);
}
