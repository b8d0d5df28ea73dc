// What a planned A/B design can detect (analysis/stats/detectable.hpp): the per-pair spread from a
// synthetic A/B DB whose noise is known, the smallest detectable ratio by its formula, and the
// insensitive flag against max_ratio and min_ratio.
#include "analysis/stats/detectable.hpp"
#include "analysis/data/ab_pairs.hpp"
#include "analysis/simulate/synthetic.hpp"

#include <boost/math/distributions/students_t.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <filesystem>
#include <stdexcept>
#include <unistd.h>

namespace {

std::string tmp_db(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("hk-detectable-" + std::to_string(::getpid()) + "-" + name + ".db"))
      .string();
}

}  // namespace

TEST(PairSpread, PooledWithinStratumSdOfTheLinearisedLogRatio) {
  // Two strata; u = c / M_c - b / M_b with M_b = 10, M_c = 20 (strata weigh equally).
  analysis::MetricPairs p;
  p.rows = {{10, 20}, {10, 22}, {10, 18}, {10, 20}};
  p.stratum = {"a", "a", "b", "b"};
  const auto s = analysis::pair_spread(p);
  ASSERT_TRUE(s);
  // u: stratum a {0, 0.1}, stratum b {-0.1, 0}; within-stratum SS = 0.005 + 0.005, df 2.
  EXPECT_NEAR(s->sigma, std::sqrt(0.01 / 2), 1e-12);
  EXPECT_EQ(s->df, 2);
  EXPECT_EQ(s->pairs, 4);
  EXPECT_DOUBLE_EQ(s->mean_b, 10);
  EXPECT_DOUBLE_EQ(s->mean_c, 20);
  // The t interval: ratio 2, SE(log) = sigma sqrt(1/2 + 1/2) / 2, t with 2 df.
  const auto iv = analysis::delta_t_interval(p, 0.95);
  ASSERT_TRUE(iv);
  const double se = std::sqrt(0.005) / 2, t = boost::math::quantile(boost::math::students_t(2), 0.975);
  EXPECT_DOUBLE_EQ(iv->ratio, 2);
  EXPECT_NEAR(iv->se_log, se, 1e-12);
  EXPECT_NEAR(iv->lower, 2 * std::exp(-t * se), 1e-12);
  EXPECT_NEAR(iv->upper, 2 * std::exp(t * se), 1e-12);
  EXPECT_THROW(analysis::delta_t_interval(p, 1.0), std::invalid_argument);
  // One pair per stratum: no within-stratum spread, cannot know.
  p.rows = {{10, 20}, {10, 22}};
  p.stratum = {"a", "b"};
  EXPECT_FALSE(analysis::pair_spread(p));
  EXPECT_FALSE(analysis::pair_spread(analysis::MetricPairs{}));
}

TEST(DetectableChange, TheFormulaAndTheInsensitiveFlag) {
  // sigma 0.2, 4 strata of 10 pairs: SE = 0.2 sqrt(4 / 10) / 4; k = t_36(0.975) + t_36(0.8).
  const boost::math::students_t t36(36);
  const double se = 0.2 * std::sqrt(0.4) / 4, k = boost::math::quantile(t36, 0.975) + boost::math::quantile(t36, 0.8);
  const auto d = analysis::detectable_change("compute_p99", 1.05, std::nullopt, 0.2, {10, 10, 10, 10}, 0.95);
  ASSERT_TRUE(d.up_from_one && d.down_from_one && d.above_tolerance && d.se_log);
  EXPECT_NEAR(*d.se_log, se, 1e-12);
  EXPECT_EQ(d.df, 36);
  EXPECT_NEAR(*d.up_from_one, std::exp(k * se), 1e-9);  // about 1.093
  EXPECT_NEAR(*d.down_from_one, std::exp(-k * se), 1e-9);
  EXPECT_NEAR(*d.above_tolerance, 1.05 * std::exp(k * se), 1e-9);
  EXPECT_FALSE(d.below_tolerance);
  EXPECT_TRUE(d.insensitive);  // 1.093 > 1.05
  EXPECT_FALSE(analysis::detectable_change("compute_p99", 1.2, std::nullopt, 0.2, {10, 10, 10, 10}, 0.95).insensitive);
  // min_ratio: insensitive when the largest detectable ratio below 1 is under it.
  EXPECT_TRUE(analysis::detectable_change("achieved_ratio", std::nullopt, 0.95, 0.2, {10, 10, 10, 10}, 0.95).insensitive);
  EXPECT_FALSE(analysis::detectable_change("achieved_ratio", std::nullopt, 0.8, 0.2, {10, 10, 10, 10}, 0.95).insensitive);
  // One pair per stratum: no interval, nothing detectable.
  const auto one = analysis::detectable_change("compute_p99", 1.5, std::nullopt, 0.2, {1, 1}, 0.95);
  EXPECT_TRUE(one.insensitive);
  EXPECT_TRUE(std::isinf(*one.up_from_one));
  // Four times the pairs halve the SE.
  const auto more = analysis::detectable_change("compute_p99", 1.05, std::nullopt, 0.2, {40, 40, 40, 40}, 0.95);
  EXPECT_NEAR(*more.se_log, se / 2, 1e-12);
  // No sigma: nothing but the reason.
  const auto none = analysis::detectable_change("compute_p99", 1.05, std::nullopt, std::nullopt, {10}, 0.95, 0.8, "why");
  EXPECT_FALSE(none.up_from_one);
  EXPECT_FALSE(none.insensitive);
  EXPECT_EQ(none.why_unknown, "why");
  EXPECT_THROW(analysis::detectable_change("x", 1.1, std::nullopt, 0.2, {}, 0.95), std::invalid_argument);
  EXPECT_THROW(analysis::detectable_change("x", 1.1, std::nullopt, 0.2, {0}, 0.95), std::invalid_argument);
  EXPECT_THROW(analysis::detectable_change("x", 1.1, std::nullopt, 0.2, {3}, 1.0), std::invalid_argument);
}

TEST(DetectableChanges, TheSpreadOfASyntheticDbWithKnownNoise) {
  // Each case gets log-normal noise of sd 0.1 and no stratum effect: the log ratio of a pair
  // has sd sqrt(2) x 0.1, and u is close to it (values near their means).
  const auto db = tmp_db("known");
  analysis::SyntheticAbOptions o;
  o.case_sd = 0.1;
  o.stratum_sd = 0;
  o.pairs_per_stratum = 8;
  analysis::write_synthetic_ab(db, o);
  const std::vector<analysis::MetricTolerance> tol{{"reclaim_duration", 1.2, std::nullopt, 1},
                                                     {"trigger_delay", 1.5, std::nullopt, 2}};
  // Planned: 6 pairs in each of two bounded-reclaim strata and one static-zram stratum, which
  // does not measure reclaim_duration (no memory.reclaim write) and must not count for it.
  const std::map<std::string, int> planned{
      {"vm0/fast-random/bounded-reclaim", 6}, {"vm1/fast-random/bounded-reclaim", 6}, {"vm0/fast-random/static-zram", 6}};
  const auto d = analysis::detectable_changes(analysis::regression_metrics(), analysis::paired_values(db, db), db, tol,
                                              planned, 0.99);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].metric, "reclaim_duration");
  ASSERT_TRUE(d[0].sigma) << d[0].why_unknown;
  EXPECT_NEAR(*d[0].sigma, std::sqrt(2.0) * 0.1, 0.04);
  EXPECT_EQ(d[0].variance_pairs, 2 * 2 * 8);  // bounded-reclaim pairs: vms x regimes x pairs
  EXPECT_EQ(d[0].planned_strata, 2);
  EXPECT_EQ(d[0].planned_pairs, 12);
  EXPECT_EQ(d[0].df, 10);
  // trigger_delay is 4 s in every case: no spread, so any change is detectable.
  ASSERT_TRUE(d[1].sigma);
  EXPECT_NEAR(*d[1].sigma, 0, 1e-9);
  EXPECT_NEAR(*d[1].up_from_one, 1, 1e-9);
  std::filesystem::remove(db);
}

// Issue 59: how many pairs a tolerance needs. The R found is the first at which
// detectable_change (the same formula, the same sigma) stops being insensitive: R - 1 is still
// insensitive, R is not, for max_ratio and min_ratio; no sigma or no tolerance is unknown, and a
// tolerance no design can reach (max_ratio 1) is beyond the cap.
TEST(RepeatsNeeded, TheFirstRepeatsAtWhichTheToleranceIsDetected) {
  using O = analysis::RepeatsNeeded::Outcome;
  const auto insensitive_at = [](std::optional<double> max_r, std::optional<double> min_r, int strata, int r) {
    return analysis::detectable_change("m", max_r, min_r, 0.2, std::vector<int>(strata, r), 0.995).insensitive;
  };
  // sigma 0.2, 4 strata, tolerance 1.1: 4 x 10 pairs detect 1.093 (test above, at 95%), so at
  // 99.5% some R above 10 is needed.
  const auto n = analysis::repeats_needed(1.1, std::nullopt, 0.2, 4, 0.995);
  ASSERT_EQ(n.outcome, O::found);
  EXPECT_GT(n.repeats, 10);
  EXPECT_TRUE(insensitive_at(1.1, std::nullopt, 4, n.repeats - 1));
  EXPECT_FALSE(insensitive_at(1.1, std::nullopt, 4, n.repeats));
  const auto low = analysis::repeats_needed(std::nullopt, 0.9, 0.2, 4, 0.995);
  ASSERT_EQ(low.outcome, O::found);
  EXPECT_TRUE(insensitive_at(std::nullopt, 0.9, 4, low.repeats - 1));
  EXPECT_FALSE(insensitive_at(std::nullopt, 0.9, 4, low.repeats));
  // A wide tolerance is met by the smallest design that gives an interval: 2 pairs per stratum.
  EXPECT_EQ(analysis::repeats_needed(3.0, std::nullopt, 0.2, 4, 0.995).repeats, 2);
  // Twice the strata need about half the repeats (SE ~ sigma / sqrt(strata x R)).
  const auto wide = analysis::repeats_needed(1.1, std::nullopt, 0.2, 8, 0.995);
  EXPECT_NEAR(wide.repeats, n.repeats / 2.0, 1.5);
  EXPECT_EQ(analysis::repeats_needed(1.0, std::nullopt, 0.2, 4, 0.995, 0.8, 500).outcome, O::beyond_cap);
  EXPECT_EQ(analysis::repeats_needed(1.0, std::nullopt, 0.2, 4, 0.995, 0.8, 500).repeats, 500);
  EXPECT_EQ(analysis::repeats_needed(1.1, std::nullopt, std::nullopt, 4, 0.995).outcome, O::unknown);
  EXPECT_EQ(analysis::repeats_needed(std::nullopt, std::nullopt, 0.2, 4, 0.995).outcome, O::unknown);
}
