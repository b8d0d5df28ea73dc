// A/B regression comparison (analysis/compare/regression.hpp): the tolerance rule at its
// edges, and compare_variants on synthetic A/B DBs with known candidate/baseline ratios.
#include "analysis/compare/regression.hpp"
#include "analysis/simulate/synthetic.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <unistd.h>

namespace {

using analysis::MetricComparison;

std::string tmp_db(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("hk-regression-" + std::to_string(::getpid()) + "-" + name + ".db"))
      .string();
}

analysis::RegressionDesign ab_design(std::uint64_t seed = 7) {
  analysis::RegressionDesign c;
  c.file = "synthetic-ab.yaml";
  c.design = "ab-pairs";
  c.seed = seed;
  c.bootstrap_replicates = 2000;
  c.alpha = 0.05;
  c.tolerances = {{"reclaim_duration", 1.2, std::nullopt, 1},
                  {"achieved_ratio", std::nullopt, 0.9, 2},
                  {"compute_p99", 1.3, std::nullopt, 3},
                  {"bg_psi_some", 1.2, 0.5, 4}};
  return c;
}

std::map<std::string, MetricComparison> by_name(const std::vector<MetricComparison>& v) {
  std::map<std::string, MetricComparison> m;
  for (const auto& x : v) m.emplace(x.metric, x);
  return m;
}

TEST(RegressionRule, MaxRatioNeedsTheLowerBoundStrictlyAbove) {
  EXPECT_TRUE(analysis::is_regression(1.21, 1.5, 1.2, std::nullopt));
  EXPECT_FALSE(analysis::is_regression(1.2, 1.5, 1.2, std::nullopt));   // equal to the bound: not a regression
  EXPECT_FALSE(analysis::is_regression(1.1, 1.5, 1.2, std::nullopt));   // interval straddles the bound
  EXPECT_FALSE(analysis::is_regression(0.1, 0.2, 1.2, std::nullopt));   // an improvement is never a regression
}

TEST(RegressionRule, MinRatioNeedsTheUpperBoundStrictlyBelow) {
  EXPECT_TRUE(analysis::is_regression(0.5, 0.89, std::nullopt, 0.9));
  EXPECT_FALSE(analysis::is_regression(0.5, 0.9, std::nullopt, 0.9));   // equal to the bound: not a regression
  EXPECT_FALSE(analysis::is_regression(0.85, 0.95, std::nullopt, 0.9));
  EXPECT_FALSE(analysis::is_regression(2.0, 3.0, std::nullopt, 0.9));
}

TEST(RegressionRule, BothBoundsAndNone) {
  EXPECT_FALSE(analysis::is_regression(0.95, 1.15, 1.2, 0.9));
  EXPECT_TRUE(analysis::is_regression(1.25, 1.4, 1.2, 0.9));
  EXPECT_TRUE(analysis::is_regression(0.7, 0.85, 1.2, 0.9));
  EXPECT_FALSE(analysis::is_regression(0.5, 1.5, 1.2, 0.9));  // wider than the band on both sides
  EXPECT_FALSE(analysis::is_regression(5, 6, std::nullopt, std::nullopt));
}

TEST(RegressionRule, PointPastTheToleranceWithoutTheIntervalIsInconclusive) {
  // achieved_ratio 0.682 [0.581, 0.865] against min_ratio 0.8 (MGLRU on vs off, this machine).
  EXPECT_EQ(analysis::metric_verdict(0.682, 0.581, 0.865, std::nullopt, 0.8), "inconclusive");
  EXPECT_EQ(analysis::metric_verdict(0.682, 0.581, 0.799, std::nullopt, 0.8), "regression");
  EXPECT_EQ(analysis::metric_verdict(0.8, 0.581, 0.865, std::nullopt, 0.8), "ok");  // at the bound: not past it
  EXPECT_EQ(analysis::metric_verdict(1.25, 0.9, 1.6, 1.2, std::nullopt), "inconclusive");
  EXPECT_EQ(analysis::metric_verdict(1.25, 1.21, 1.6, 1.2, std::nullopt), "regression");
  EXPECT_EQ(analysis::metric_verdict(1.1, 0.9, 1.6, 1.2, 0.5), "ok");
  EXPECT_EQ(analysis::metric_verdict(0.4, 0.2, 0.6, 1.2, 0.5), "inconclusive");
}

TEST(RegressionRule, ChangeIsWhatTheIntervalExcludes) {
  EXPECT_EQ(analysis::change_of(1.01, 1.3), "higher");
  EXPECT_EQ(analysis::change_of(0.5, 0.99), "lower");
  EXPECT_EQ(analysis::change_of(1.0, 1.3), "none shown");  // touching 1 is not excluding it
  EXPECT_EQ(analysis::change_of(0.7, 1.0), "none shown");
  EXPECT_EQ(analysis::change_of(0.9, 1.1), "none shown");
}

TEST(RegressionMetrics, FixedSetAndOrder) {
  std::vector<std::string> names;
  for (const auto& m : analysis::regression_metrics()) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"reclaim_duration", "achieved_ratio", "trigger_delay", "bg_psi_some",
                                             "bg_psi_full", "swapout", "refaults", "compute_p99", "sqlite_p99",
                                             "restoration_time"}));
}

TEST(CompareVariants, FlagsTheMetricThatMovedAndOnlyIt) {
  const auto db = tmp_db("moved");
  analysis::SyntheticAbOptions o;
  o.reclaim_ratio = 1.5;
  analysis::write_synthetic_ab(db, o);
  const auto res = analysis::compare_variants(db, db, ab_design());
  ASSERT_EQ(res.size(), analysis::regression_metrics().size());
  const auto m = by_name(res);
  const auto& rd = m.at("reclaim_duration");
  EXPECT_EQ(rd.verdict, "regression") << rd.detail;
  EXPECT_EQ(rd.pairs, 2 * 2 * 3);  // bounded-reclaim pairs only: vms x regimes x repeats
  EXPECT_EQ(rd.strata, 4);
  ASSERT_TRUE(rd.ratio && rd.lower && rd.upper);
  EXPECT_NEAR(*rd.ratio, 1.5, 0.1);
  EXPECT_GT(*rd.lower, 1.2);
  EXPECT_LE(*rd.lower, *rd.ratio);
  EXPECT_GE(*rd.upper, *rd.ratio);
  EXPECT_NE(rd.detail.find("above max_ratio 1.2"), std::string::npos) << rd.detail;
  EXPECT_EQ(rd.change, "higher");
  EXPECT_DOUBLE_EQ(rd.level, 1 - 0.05 / 4);
  for (const auto& r : res) {
    if (r.metric == "reclaim_duration") continue;
    const bool has_tol = r.max_ratio || r.min_ratio;
    EXPECT_EQ(r.verdict, has_tol ? "ok" : "reported") << r.metric << ": " << r.detail;
    ASSERT_TRUE(r.ratio) << r.metric;
    EXPECT_NEAR(*r.ratio, 1.0, 0.08) << r.metric;
  }
  EXPECT_EQ(m.at("compute_p99").pairs, 2 * 2 * 3 * 3);  // every configuration
  EXPECT_EQ(m.at("compute_p99").unit, "ms");
  // p99 in ms: the synthetic compute canary's p99 scale is 20,000 us.
  ASSERT_TRUE(m.at("compute_p99").baseline_mean);
  EXPECT_GT(*m.at("compute_p99").baseline_mean, 5.0);
  EXPECT_LT(*m.at("compute_p99").baseline_mean, 80.0);
  std::filesystem::remove(db);
}

TEST(CompareVariants, CandidateFasterIsNoRegressionButBelowMinRatioIs) {
  const auto db = tmp_db("faster");
  analysis::SyntheticAbOptions o;
  o.stall_ratio = 0.3;  // bg_psi_some tolerance: min 0.5, max 1.2
  analysis::write_synthetic_ab(db, o);
  const auto m = by_name(analysis::compare_variants(db, db, ab_design()));
  EXPECT_EQ(m.at("bg_psi_some").verdict, "regression") << m.at("bg_psi_some").detail;
  EXPECT_NE(m.at("bg_psi_some").detail.find("below min_ratio 0.5"), std::string::npos);
  EXPECT_EQ(m.at("bg_psi_full").verdict, "reported");  // moved, but no tolerance
  EXPECT_EQ(m.at("bg_psi_full").change, "lower");
  EXPECT_NEAR(*m.at("bg_psi_full").ratio, 0.3, 0.05);
  std::filesystem::remove(db);
}

TEST(CompareVariants, AaRunFlagsNothing) {
  for (std::uint64_t seed : {1, 2, 3}) {
    const auto db = tmp_db("aa" + std::to_string(seed));
    analysis::SyntheticAbOptions o;
    o.seed = seed;
    analysis::write_synthetic_ab(db, o);
    for (const auto& r : analysis::compare_variants(db, db, ab_design(seed))) {
      EXPECT_NE(r.verdict, "regression") << "seed " << seed << " " << r.metric << ": " << r.detail;
      EXPECT_NE(r.verdict, "no data") << r.metric;
      ASSERT_TRUE(r.ratio && r.lower && r.upper) << r.metric;
      EXPECT_NEAR(*r.ratio, 1.0, 0.1) << r.metric;
      EXPECT_LE(*r.lower, *r.upper) << r.metric;
    }
    std::filesystem::remove(db);
  }
}

TEST(CompareVariants, SameSeedSameNumbersOtherSeedOtherInterval) {
  const auto db = tmp_db("seed");
  analysis::SyntheticAbOptions o;
  o.reclaim_ratio = 1.5;
  analysis::write_synthetic_ab(db, o);
  const auto a = analysis::compare_variants(db, db, ab_design(11));
  const auto b = analysis::compare_variants(db, db, ab_design(11));
  const auto c = analysis::compare_variants(db, db, ab_design(12));
  ASSERT_EQ(a.size(), b.size());
  bool any_differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].lower, b[i].lower) << a[i].metric;
    EXPECT_EQ(a[i].upper, b[i].upper) << a[i].metric;
    EXPECT_EQ(a[i].ratio, b[i].ratio) << a[i].metric;
    EXPECT_EQ(a[i].verdict, b[i].verdict);
    EXPECT_EQ(a[i].ratio, c[i].ratio) << a[i].metric;  // the estimate does not depend on the seed
    any_differs = any_differs || a[i].lower != c[i].lower || a[i].upper != c[i].upper;
  }
  EXPECT_TRUE(any_differs) << "another bootstrap seed gave identical intervals";
  std::filesystem::remove(db);
}

TEST(CompareVariants, ZeroBaselineMeanIsNoData) {
  const auto db = tmp_db("zero");
  analysis::SyntheticAbOptions o;
  o.stall_scale = 0;  // bg stall and refault counters stay 0 in both variants
  analysis::write_synthetic_ab(db, o);
  const auto m = by_name(analysis::compare_variants(db, db, ab_design()));
  for (const char* name : {"bg_psi_some", "bg_psi_full", "refaults"}) {
    const auto& r = m.at(name);
    EXPECT_EQ(r.verdict, "no data") << name << ": " << r.detail;
    EXPECT_FALSE(r.ratio) << name;
    EXPECT_FALSE(r.lower) << name;
    ASSERT_TRUE(r.baseline_mean) << name;
    EXPECT_EQ(*r.baseline_mean, 0.0) << name;
    EXPECT_GT(r.pairs, 0) << name;
  }
  EXPECT_EQ(m.at("swapout").verdict, "reported");
  std::filesystem::remove(db);
}

TEST(CompareVariants, StoredBaselineUsesOnlyItsBaselineCases) {
  // Stored baseline DB: its own candidates are 3x (must be ignored). Candidate DB: 1.5x.
  const auto base = tmp_db("base"), cand = tmp_db("cand");
  analysis::SyntheticAbOptions ob;
  ob.reclaim_ratio = 3.0;
  analysis::write_synthetic_ab(base, ob);
  analysis::SyntheticAbOptions oc;
  oc.seed = 5;
  oc.reclaim_ratio = 1.5;
  analysis::write_synthetic_ab(cand, oc);
  const auto m = by_name(analysis::compare_variants(base, cand, ab_design()));
  ASSERT_TRUE(m.at("reclaim_duration").ratio);
  EXPECT_NEAR(*m.at("reclaim_duration").ratio, 1.5, 0.15);
  EXPECT_EQ(m.at("reclaim_duration").verdict, "regression");
  std::filesystem::remove(base);
  std::filesystem::remove(cand);
}

TEST(CompareVariants, NoPairsIsNoDataAndBadInputThrows) {
  const auto db = tmp_db("nopairs");
  analysis::write_synthetic_campaign(db, analysis::SyntheticOptions{.vms = 1, .regimes = {"slow-random"},
                                                                    .triplets_per_stratum = 1});
  for (const auto& r : analysis::compare_variants(db, db, ab_design())) {  // no spec_json.variant at all
    EXPECT_EQ(r.verdict, "no data") << r.metric;
    EXPECT_EQ(r.pairs, 0);
  }
  auto c = ab_design();
  c.design = "matched-triplets";
  EXPECT_THROW(analysis::compare_variants(db, db, c), std::runtime_error);
  c = ab_design();
  c.tolerances.push_back({"p99_of_nothing", 1.1, std::nullopt, 9});
  EXPECT_THROW(analysis::compare_variants(db, db, c), std::runtime_error);
  std::filesystem::remove(db);
}

}  // namespace
