// The sequential A/B rule (analysis/stats/sequential.hpp): the look schedule, the level split over
// metrics and looks, the decided verdicts, and the rule on simulated pair sequences: a 1.3x
// change stops with "regression" (max_ratio 1.05, 10 metrics, 5 looks); with no change (x1.00 against max_ratio 1.0,
// the hardest null) it flags no more often than alpha over many seeds, while judging every look
// at the unsplit level flags more often than that (the split is what keeps it valid).
#include "analysis/data/ab_pairs.hpp"
#include "analysis/stats/bootstrap.hpp"
#include "analysis/stats/sequential.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>

namespace {

const analysis::RegressionMetric& p99_metric() {
  for (const auto& m : analysis::regression_metrics())
    if (std::string(m.name) == "compute_p99") return m;
  throw std::logic_error("no compute_p99");
}

/// `repeats` pairs in one stratum: baseline 10 ms x exp(N(0, 0.3)), candidate = baseline x
/// `ratio` x exp(N(0, sd)) (sd: the per-pair noise of the log ratio).
analysis::MetricPairs simulated(std::uint64_t seed, int repeats, double ratio, double sd = 0.15) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> level(0, 0.3), noise(0, sd);
  analysis::MetricPairs p;
  for (int r = 1; r <= repeats; ++r) {
    const double b = 10 * std::exp(level(rng));
    p.rows.push_back({b, b * ratio * std::exp(noise(rng))});
    p.stratum.push_back("vm0/fast-random/bounded-reclaim");
    p.repeat.push_back(r);
  }
  return p;
}

analysis::BootstrapOptions boot(std::uint64_t seed) {
  analysis::BootstrapOptions bo;
  bo.replicates = 1000;
  bo.seed = seed;
  bo.threads = 1;
  return bo;
}

}  // namespace

TEST(LookSchedule, EveryFirstRepeatsUpToTheCap) {
  EXPECT_EQ(analysis::look_schedule(6, 30).repeats, (std::vector<int>{6, 12, 18, 24, 30}));
  EXPECT_EQ(analysis::look_schedule(6, 15).repeats, (std::vector<int>{6, 12, 15}));
  EXPECT_EQ(analysis::look_schedule(4, 4).repeats, (std::vector<int>{4}));
  EXPECT_THROW(analysis::look_schedule(0, 4), std::invalid_argument);
  EXPECT_THROW(analysis::look_schedule(5, 4), std::invalid_argument);
}

TEST(SequentialLevel, AlphaIsSplitOverMetricsAndLooks) {
  EXPECT_DOUBLE_EQ(analysis::comparison_level(0.05, 10), 1 - 0.05 / 10);
  EXPECT_DOUBLE_EQ(analysis::comparison_level(0.05, 10, 5), 1 - 0.05 / 50);
  EXPECT_DOUBLE_EQ(analysis::comparison_level(0.05, 0, 2), 1 - 0.05 / 2);  // m at least 1
  EXPECT_THROW(analysis::comparison_level(0.05, 10, 0), std::invalid_argument);
}

TEST(SequentialVerdict, DecidedBeyondOrWithinElseInconclusive) {
  EXPECT_EQ(analysis::sequential_verdict(1.21, 1.4, 1.2, std::nullopt), "regression");
  EXPECT_EQ(analysis::sequential_verdict(0.9, 1.2, 1.2, std::nullopt), "ok-decided");  // equal to the bound: within
  EXPECT_EQ(analysis::sequential_verdict(0.9, 1.25, 1.2, std::nullopt), "inconclusive");
  EXPECT_EQ(analysis::sequential_verdict(0.85, 1.1, 1.2, 0.9), "inconclusive");  // below min_ratio's side
  EXPECT_EQ(analysis::sequential_verdict(0.95, 1.1, 1.2, 0.9), "ok-decided");
  EXPECT_EQ(analysis::sequential_verdict(0.5, 0.85, 1.2, 0.9), "regression");
}

TEST(SequentialStop, ARegressionOrEveryToleranceDecided) {
  analysis::MetricComparison a, b, reported;
  a.max_ratio = 1.2;
  b.min_ratio = 0.8;
  a.verdict = "ok-decided";
  b.verdict = "inconclusive";
  reported.verdict = "reported";
  EXPECT_FALSE(analysis::sequential_stop({a, b, reported}));
  b.verdict = "ok-decided";
  EXPECT_TRUE(analysis::sequential_stop({a, b, reported}));  // a metric without tolerance holds nothing up
  b.verdict = "no data";
  EXPECT_FALSE(analysis::sequential_stop({a, b}));
  a.verdict = "regression";
  EXPECT_TRUE(analysis::sequential_stop({a, b}));
}

TEST(RunSequential, AOnePointThreeChangeStopsWithARegressionBeforeTheCap) {
  const auto s = analysis::look_schedule(6, 30);
  int before_cap = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto o = analysis::run_sequential(p99_metric(), simulated(seed, 30, 1.3), s, 1.05, std::nullopt, 0.05, 10,
                                            boot(seed));
    EXPECT_EQ(o.verdict, "regression") << "seed " << seed << ": " << o.at_stop.detail;
    before_cap += o.look < s.looks() ? 1 : 0;
    EXPECT_EQ(o.pairs, s.repeats[static_cast<std::size_t>(o.look - 1)]);
  }
  EXPECT_GE(before_cap, 15);  // the looks save pairs on most sequences
}

TEST(RunSequential, NoChangeIsDecidedOkWithinAWideTolerance) {
  const auto s = analysis::look_schedule(6, 30);
  const auto o = analysis::run_sequential(p99_metric(), simulated(3, 30, 1.0), s, 1.5, std::nullopt, 0.05, 10, boot(3));
  EXPECT_EQ(o.verdict, "ok-decided") << o.at_stop.detail;
}

TEST(RunSequential, NoChangeFlagsAtMostAlphaOverManySeedsAndTheUnsplitLevelFlagsMore) {
  // x1.00 against max_ratio 1.0: every flag is false. alpha 0.1 for one metric over 5 looks.
  const auto s = analysis::look_schedule(6, 30);
  const int runs = 300;
  int flagged = 0, naive = 0;
  for (std::uint64_t seed = 1; seed <= runs; ++seed) {
    const auto p = simulated(1000 + seed, 30, 1.0);
    const auto o = analysis::run_sequential(p99_metric(), p, s, 1.0, std::nullopt, 0.1, 1, boot(seed));
    flagged += o.verdict == "regression" ? 1 : 0;
    // The same looks, each at 1 - alpha (no split over looks): optional stopping inflates it.
    for (int k = 0; k < s.looks(); ++k) {
      analysis::MetricPairs at;
      for (std::size_t i = 0; i < p.rows.size(); ++i)
        if (p.repeat[i] <= s.repeats[static_cast<std::size_t>(k)]) {
          at.rows.push_back(p.rows[i]);
          at.stratum.push_back(p.stratum[i]);
        }
      const auto c = analysis::compare_pairs(p99_metric(), at, 1.0, std::nullopt, 0.9, boot(seed),
                                             analysis::VerdictRule::decide);
      if (c.verdict == "regression") {
        ++naive;
        break;
      }
    }
  }
  EXPECT_LE(flagged, static_cast<int>(0.1 * runs)) << flagged << " of " << runs;
  std::printf("x1.00 against max_ratio 1.0 over %d sequences: %d flagged with alpha split over 5 looks, %d at the "
              "unsplit level\n", runs, flagged, naive);
  EXPECT_GT(naive, flagged) << "naive " << naive << ", split " << flagged;
  EXPECT_GT(naive, static_cast<int>(0.05 * runs)) << naive;  // a two-sided 90% interval alone: about 5% per look
}

TEST(RunSequential, NeedsRepeatsAndATolerance) {
  auto p = simulated(1, 6, 1.0);
  const auto s = analysis::look_schedule(6, 6);
  EXPECT_THROW(analysis::run_sequential(p99_metric(), p, s, std::nullopt, std::nullopt, 0.05, 1, boot(1)),
               std::invalid_argument);
  p.repeat.pop_back();
  EXPECT_THROW(analysis::run_sequential(p99_metric(), p, s, 1.2, std::nullopt, 0.05, 1, boot(1)),
               std::invalid_argument);
}
