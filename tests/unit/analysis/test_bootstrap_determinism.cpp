// Determinism by seed across thread counts: the replicate matrices are bit-identical for threads
// 1, 2, 3 and 8; a different seed gives different replicates. Also input validation.
#include "analysis/stats/bootstrap.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

namespace {
Eigen::MatrixXd data(std::vector<int>& strata) {
  Eigen::MatrixXd d(37, 4);
  strata.clear();
  for (int i = 0; i < 37; ++i) {
    strata.push_back(i % 7);
    for (int j = 0; j < 4; ++j) d(i, j) = std::sin(0.37 * i + j) * 0.1 - 0.05 * j;
  }
  return d;
}
bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * a.size()) == 0;
}
}  // namespace

TEST(BootstrapDeterminism, BitIdenticalWhateverTheThreadCount) {
  std::vector<int> s;
  const auto d = data(s);
  const auto ref = analysis::stratified_bootstrap(d, s, {1001, 42, 1});
  for (unsigned t : {2u, 3u, 8u}) {
    const auto r = analysis::stratified_bootstrap(d, s, {1001, 42, t});
    EXPECT_TRUE(same_bits(ref.plain, r.plain)) << t << " threads";
    EXPECT_TRUE(same_bits(ref.corrected, r.corrected)) << t << " threads";
  }
  const auto other = analysis::stratified_bootstrap(d, s, {1001, 43, 2});
  EXPECT_FALSE(same_bits(ref.plain, other.plain));
  // A prefix of replicates does not depend on B (per-replicate generators).
  const auto shorter = analysis::stratified_bootstrap(d, s, {500, 42, 3});
  EXPECT_TRUE(same_bits(ref.plain.topRows(500), shorter.plain));
}

TEST(BootstrapDeterminism, PointIsMeanOfStratumMeansAndCorrectionWidens) {
  std::vector<int> s;
  const auto d = data(s);
  const auto r = analysis::stratified_bootstrap(d, s, {4000, 9, 2});
  Eigen::VectorXd expect = Eigen::VectorXd::Zero(4);
  for (int st = 0; st < 7; ++st) {
    Eigen::VectorXd m = Eigen::VectorXd::Zero(4);
    int n = 0;
    for (int i = 0; i < 37; ++i)
      if (s[i] == st) { m += d.row(i).transpose(); ++n; }
    expect += m / n;
  }
  expect /= 7;
  EXPECT_LT((r.point - expect).cwiseAbs().maxCoeff(), 1e-15);
  for (int j = 0; j < 4; ++j) {
    const auto p = analysis::percentile_interval(r.plain.col(j), 0.9875);
    const auto c = analysis::percentile_interval(r.corrected.col(j), 0.9875);
    EXPECT_LT(c.lower, p.lower) << j;
    EXPECT_GT(c.upper, p.upper) << j;
  }
}

TEST(BootstrapDeterminism, RejectsBadInput) {
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(3, 2);
  EXPECT_THROW(analysis::stratified_bootstrap(d, {0, 1}, {}), std::invalid_argument);        // label count
  EXPECT_THROW(analysis::stratified_bootstrap(d, {0, 2, 2}, {}), std::invalid_argument);     // label 1 empty
  d(0, 0) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(analysis::stratified_bootstrap(d, {0, 0, 1}, {}), std::invalid_argument);     // NaN
  EXPECT_THROW(analysis::stratified_bootstrap(Eigen::MatrixXd(0, 4), {}, {}), std::invalid_argument);
}
