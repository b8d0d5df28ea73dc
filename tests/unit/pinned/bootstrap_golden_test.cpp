// Pinned numbers: the stratified bootstrap interval for a fixed dataset and
// seed, as exact doubles (printed with %.17g when this test was written). They change
// when anything that must not change between machines changes: Boost.Random's
// mt19937_64 or uniform_int_distribution, the splitmix64 seeding, the resampling order,
// the type-7 quantile, or the arithmetic (see tests/README.md, "What must not change
// between machines"). A difference is not a tolerance question: find out what changed.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "analysis/stats/bootstrap.hpp"

namespace {

/// 15 matched triplets in 3 strata of 5; two columns of "log ratios" with exact binary
/// fractions (k/64), so the dataset itself is identical on every machine.
Eigen::MatrixXd dataset(std::vector<int>& strata) {
  Eigen::MatrixXd d(15, 2);
  strata.clear();
  for (int i = 0; i < 15; ++i) {
    strata.push_back(i / 5);
    d(i, 0) = static_cast<double>((i * 37) % 23 - 11) / 64.0;
    d(i, 1) = static_cast<double>((i * 53) % 29 - 9) / 64.0;
  }
  return d;
}

std::string g17(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

}  // namespace

TEST(PinnedNumbers, StratifiedBootstrapIntervalForSeed20261130) {
  std::vector<int> s;
  const auto d = dataset(s);
  const auto r = analysis::stratified_bootstrap(d, s, {2000, 20261130, 2});
  const double level = analysis::simultaneous_level(0.05, 4);  // 0.9875 (study)
  const auto c0 = analysis::percentile_interval(r.plain.col(0), level);
  const auto c1 = analysis::percentile_interval(r.plain.col(1), level);
  const auto k0 = analysis::percentile_interval(r.corrected.col(0), level);
  // Exact: EXPECT_EQ on doubles, not NEAR.
  EXPECT_EQ(g17(r.point(0)), "-0.0062499999999999986");
  EXPECT_EQ(g17(r.point(1)), "0.097916666666666666");
  EXPECT_EQ(g17(c0.lower), "-0.070833333333333345");
  EXPECT_EQ(g17(c0.upper), "0.059375000000000004");
  EXPECT_EQ(g17(c1.lower), "0.0083203124999999094");
  EXPECT_EQ(g17(c1.upper), "0.17865234375000014");
  EXPECT_EQ(g17(k0.lower), "-0.078456361773430724");
  EXPECT_EQ(g17(k0.upper), "0.06712098051171185");
  // The first replicate row, bit for bit (the draw order itself).
  EXPECT_EQ(g17(r.plain(0, 0)), "-0.0072916666666666685");
  EXPECT_EQ(g17(r.plain(0, 1)), "0.063541666666666663");
}
