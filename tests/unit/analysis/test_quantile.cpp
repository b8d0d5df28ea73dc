// Type-7 quantile against hand-computed values (numpy.quantile default "linear").
#include "analysis/quantile.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <vector>

using analysis::quantile7;

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
