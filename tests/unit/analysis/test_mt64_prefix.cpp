// The bootstrap's fast generator path is exact: Mt64Prefix yields the same outputs as
// boost::random::mt19937_64 (within and past the prefix), UniformIndex picks what Boost's
// uniform_int_distribution<int> picks (including values at bucket edges and rejections), and
// stratified_bootstrap equals, bit for bit, a plain per-replicate Boost loop on layouts with
// singleton strata, K = 1..5 and 8 columns and more rows than the prefix holds.
#include "analysis/stats/bootstrap.hpp"
#include "analysis/stats/mt64_prefix.hpp"

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace {

/// Engine that returns fixed values (to put chosen 64-bit words into Boost's distribution).
struct Scripted {
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<std::uint64_t>::max(); }
  std::vector<std::uint64_t> v;
  std::size_t i = 0;
  result_type operator()() { return v.at(i++); }
};

/// The bootstrap as first written: one Boost engine per replicate, Eigen rows (the reference).
void reference(const Eigen::MatrixXd& d, const std::vector<int>& strata, int B, std::uint64_t seed,
               Eigen::MatrixXd& plain, Eigen::MatrixXd& corrected) {
  int S = 0;
  for (int s : strata) S = std::max(S, s + 1);
  std::vector<std::vector<int>> rows(S);
  for (std::size_t i = 0; i < strata.size(); ++i) rows[strata[i]].push_back(static_cast<int>(i));
  Eigen::MatrixXd means = Eigen::MatrixXd::Zero(S, d.cols());
  for (int s = 0; s < S; ++s) {
    for (int r : rows[s]) means.row(s) += d.row(r);
    means.row(s) /= static_cast<double>(rows[s].size());
  }
  plain.resize(B, d.cols());
  corrected.resize(B, d.cols());
  const std::uint64_t base = analysis::splitmix64(seed);
  Eigen::RowVectorXd acc(d.cols()), sp(d.cols()), sc(d.cols()), m(d.cols());
  for (int r = 0; r < B; ++r) {
    boost::random::mt19937_64 gen(analysis::splitmix64(base ^ static_cast<std::uint64_t>(r)));
    sp.setZero();
    sc.setZero();
    for (int s = 0; s < S; ++s) {
      const int n = static_cast<int>(rows[s].size());
      const double f = n > 1 ? std::sqrt(n / (n - 1.0)) : 1.0;
      boost::random::uniform_int_distribution<int> pick(0, n - 1);
      acc.setZero();
      for (int j = 0; j < n; ++j) acc += d.row(rows[s][pick(gen)]);
      m = acc / static_cast<double>(n);
      sp += m;
      sc += means.row(s) + f * (m - means.row(s));
    }
    plain.row(r) = sp / static_cast<double>(S);
    corrected.row(r) = sc / static_cast<double>(S);
  }
}

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * a.size()) == 0;
}

}  // namespace

TEST(Mt64Prefix, EqualsBoostWithinAndPastThePrefix) {
  analysis::Mt64Prefix p;
  for (int prefix : {1, 7, 60, 156, 400}) {
    std::uint64_t seeds[analysis::Mt64Prefix::kLanes];
    for (int l = 0; l < analysis::Mt64Prefix::kLanes; ++l)
      seeds[l] = analysis::splitmix64(static_cast<std::uint64_t>(prefix * 100 + l));
    seeds[0] = 0;  // the all-zero seed is a valid Boost seed too
    const int lanes = prefix == 7 ? 3 : analysis::Mt64Prefix::kLanes;
    p.fill(seeds, lanes, prefix);
    for (int l = 0; l < lanes; ++l) {
      boost::random::mt19937_64 ref(seeds[l]);
      for (int k = 0; k < 700; ++k) ASSERT_EQ(p.output(l, k), ref()) << "prefix " << prefix << " lane " << l << " k " << k;
    }
  }
}

TEST(UniformIndex, PicksWhatBoostPicksAtBucketEdges) {
  const std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
  for (int n : {2, 3, 4, 5, 7, 8, 60, 64, 1000, 1 << 20, (1 << 20) + 3, std::numeric_limits<int>::max()}) {
    const analysis::UniformIndex u(n);
    std::uint64_t bucket = top / static_cast<std::uint64_t>(n);
    if (top % n == static_cast<std::uint64_t>(n - 1)) ++bucket;
    std::vector<std::uint64_t> zs = {0, 1, top, top - 1, bucket - 1, bucket, bucket + 1};
    for (std::uint64_t q : {std::uint64_t{1}, std::uint64_t{2}, static_cast<std::uint64_t>(n - 1), static_cast<std::uint64_t>(n)})
      for (std::uint64_t dz : {std::uint64_t{0}, std::uint64_t{1}})
        if (q <= top / bucket) zs.push_back(q * bucket - dz);
    boost::random::mt19937_64 g(static_cast<std::uint64_t>(n));
    for (int i = 0; i < 2000; ++i) zs.push_back(g());
    for (std::uint64_t z : zs) {
      const int mine = u.map(z);
      // Boost on [z, then an always-accepted 0]: a rejected z shows as the 0 draw's pick.
      Scripted e{{z, 0}};
      const int theirs = boost::random::uniform_int_distribution<int>(0, n - 1)(e);
      if (mine < 0) {
        EXPECT_EQ(e.i, 2u) << "n " << n << " z " << z << ": Boost accepted what UniformIndex rejected";
        EXPECT_EQ(theirs, 0);
      } else {
        EXPECT_EQ(e.i, 1u) << "n " << n << " z " << z;
        EXPECT_EQ(mine, theirs) << "n " << n << " z " << z;
      }
    }
  }
}

TEST(StratifiedBootstrap, BitIdenticalToThePlainBoostLoop) {
  struct Layout {
    int rows, strata, cols;
  };
  // Singleton strata (n = 1 draws nothing), K = 3/5 (no compile-time kernel), K = 8, 200 rows (> 156
  // draws: every replicate continues on a Boost engine past the prefix).
  for (const Layout& L : {Layout{60, 20, 4}, Layout{15, 3, 2}, Layout{9, 7, 1}, Layout{23, 5, 3}, Layout{30, 6, 8}, Layout{200, 4, 5}}) {
    Eigen::MatrixXd d(L.rows, L.cols);
    std::vector<int> s;
    for (int i = 0; i < L.rows; ++i) {
      s.push_back(i < L.strata ? i : (i * 7) % L.strata);
      for (int k = 0; k < L.cols; ++k) d(i, k) = std::sin(1.3 * i + 0.7 * k) * 0.2 - 0.01 * k;
    }
    Eigen::MatrixXd plain, corrected;
    reference(d, s, 301, 77, plain, corrected);
    for (unsigned t : {1u, 3u}) {
      const auto r = analysis::stratified_bootstrap(d, s, {301, 77, t});
      EXPECT_TRUE(same_bits(plain, r.plain)) << L.rows << "x" << L.cols << ", " << t << " threads";
      EXPECT_TRUE(same_bits(corrected, r.corrected)) << L.rows << "x" << L.cols << ", " << t << " threads";
    }
  }
}
