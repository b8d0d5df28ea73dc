// Type-7 quantile against hand-computed values (numpy.quantile default "linear").
#include "analysis/stats/quantile.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

using analysis::quantile7;
using analysis::quantile7_select;

TEST(Quantile7, HandComputedValues) {
  const std::vector<double> x{10, 1, 7, 3, 5, 9, 2, 8, 4, 6};  // 1..10 shuffled
  // h = 9 p: p=0.99 -> h=8.91 -> 9 + 0.91 (10 - 9) = 9.91
  EXPECT_DOUBLE_EQ(quantile7(x, 0.99), 9.91);
  EXPECT_DOUBLE_EQ(quantile7(x, 0.5), 5.5);
  EXPECT_DOUBLE_EQ(quantile7(x, 0.95), 9.55);
  EXPECT_DOUBLE_EQ(quantile7(x, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile7(x, 1.0), 10.0);
  EXPECT_DOUBLE_EQ(quantile7(std::vector<double>{42}, 0.99), 42.0);
}

TEST(Quantile7, InfinityOnlyWhenItIsInterpolated) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x(101);
  for (int i = 0; i < 101; ++i) x[i] = i + 1;
  x[100] = inf;  // one never-completed request
  // h = 99 exactly: x[99] = 100, the +inf at x[100] has weight 0.
  EXPECT_DOUBLE_EQ(quantile7(x, 0.99), 100.0);
  x[99] = inf;
  EXPECT_EQ(quantile7(x, 0.99), inf);
  std::vector<double> y{1, 2, inf};
  EXPECT_EQ(quantile7(y, 0.99), inf);  // h = 1.98, weight 0.98 on +inf
  EXPECT_DOUBLE_EQ(quantile7(y, 0.5), 2.0);
}

TEST(Quantile7, RejectsBadInput) {
  EXPECT_THROW(quantile7(std::vector<double>{}, 0.5), std::invalid_argument);
  EXPECT_THROW(quantile7(std::vector<double>{1, 2}, 1.5), std::invalid_argument);
  EXPECT_THROW(quantile7(std::vector<double>{1, std::numeric_limits<double>::quiet_NaN()}, 0.5), std::invalid_argument);
}

TEST(Quantile7, SelectionGivesTheSortedValueBitForBit) {
  // The bootstrap's percentile_interval selects instead of sorting; it must not move a bound.
  std::uint64_t state = 12345;
  auto next = [&] {  // a small LCG: ties (values mod 97) and both signs
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(static_cast<int>((state >> 33) % 97) - 40) / 7.0;
  };
  for (std::size_t n : {1u, 2u, 3u, 10u, 10001u}) {
    std::vector<double> x(n);
    for (double& v : x) v = next();
    for (double p : {0.0, 0.00625, 0.025, 0.5, 0.975, 0.99375, 1.0}) {
      std::vector<double> copy = x;
      EXPECT_EQ(quantile7_select(copy, p), quantile7(x, p)) << "n " << n << " p " << p;
    }
  }
  std::vector<double> bad{1, std::numeric_limits<double>::quiet_NaN()};
  EXPECT_THROW(quantile7_select(bad, 0.5), std::invalid_argument);
  std::vector<double> empty;
  EXPECT_THROW(quantile7_select(empty, 0.5), std::invalid_argument);
}
