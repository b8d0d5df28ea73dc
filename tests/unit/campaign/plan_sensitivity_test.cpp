// The cells of `harness plan --variance-from`'s sensitivity table (plan_sensitivity.hpp):
// a normal row, one pair per stratum (no interval) and a noise DB without spread.
#include "harness/campaign/check/plan_sensitivity.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace {
analysis::DetectableChange row(double sigma, int df) {
  analysis::DetectableChange d;
  d.metric = "compute_p99";
  d.max_ratio = 1.1;
  d.sigma = sigma;
  d.df = df;
  d.up_from_one = 1.25;
  d.down_from_one = 0.8;
  d.above_tolerance = 1.375;
  return d;
}
}  // namespace

TEST(PlanSensitivity, RowCellsNameTheSmallestDetectedRatio) {
  const auto [change, past] = harness::campaign::detectable_cells(row(0.2, 5));
  EXPECT_EQ(change, ">= 1.25");
  EXPECT_EQ(past, ">= 1.38");
}

TEST(PlanSensitivity, OnePairPerStratumDetectsNothingInsteadOfInfinity) {
  auto d = row(0.2, 0);
  d.up_from_one = std::numeric_limits<double>::infinity();
  d.down_from_one = 0.0;
  d.min_ratio = 0.9;
  const auto [change, past] = harness::campaign::detectable_cells(d);
  EXPECT_EQ(change, "none");
  EXPECT_EQ(past, "none");
}

TEST(PlanSensitivity, NoSpreadSaysSigmaZeroInsteadOfChangeFromOne) {
  auto d = row(0.0, 5);
  d.up_from_one = 1.0;
  const auto [change, past] = harness::campaign::detectable_cells(d);
  EXPECT_EQ(change, "any (sigma 0)");
  EXPECT_EQ(past, "any (sigma 0)");
}
