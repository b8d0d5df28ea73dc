// Stratified bootstrap (see bootstrap.hpp).
#include "analysis/bootstrap.hpp"

#include "analysis/quantile.hpp"

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>

namespace analysis {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

namespace {

struct Layout {
  int S = 0;
  std::vector<std::vector<int>> rows;  // S lists of row indices, ascending
};

Layout layout_of(const Eigen::MatrixXd& data, const std::vector<int>& strata) {
  if (static_cast<Eigen::Index>(strata.size()) != data.rows())
    throw std::invalid_argument("bootstrap: " + std::to_string(strata.size()) + " stratum labels for " +
                                std::to_string(data.rows()) + " rows");
  if (data.rows() == 0) throw std::invalid_argument("bootstrap: no rows (no complete triplets)");
  if (!data.allFinite()) throw std::invalid_argument("bootstrap: data contains a non-finite value");
  Layout l;
  for (int s : strata) {
    if (s < 0) throw std::invalid_argument("bootstrap: negative stratum label");
    l.S = std::max(l.S, s + 1);
  }
  l.rows.resize(l.S);
  for (std::size_t i = 0; i < strata.size(); ++i) l.rows[strata[i]].push_back(static_cast<int>(i));
  for (int s = 0; s < l.S; ++s)
    if (l.rows[s].empty()) throw std::invalid_argument("bootstrap: stratum label " + std::to_string(s) + " has no rows");
  return l;
}

Eigen::MatrixXd stratum_means(const Eigen::MatrixXd& data, const Layout& l) {
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(l.S, data.cols());
  for (int s = 0; s < l.S; ++s) {
    for (int r : l.rows[s]) m.row(s) += data.row(r);
    m.row(s) /= static_cast<double>(l.rows[s].size());
  }
  return m;
}

}  // namespace

Eigen::VectorXd stratified_mean(const Eigen::MatrixXd& data, const std::vector<int>& strata) {
  const Layout l = layout_of(data, strata);
  return stratum_means(data, l).colwise().mean().transpose();
}

BootstrapResult stratified_bootstrap(const Eigen::MatrixXd& data, const std::vector<int>& strata,
                                     const BootstrapOptions& opt) {
  if (opt.replicates < 1) throw std::invalid_argument("bootstrap: replicates must be >= 1");
  const Layout l = layout_of(data, strata);
  const Eigen::MatrixXd means = stratum_means(data, l);
  const Eigen::Index K = data.cols();
  const int B = opt.replicates;

  BootstrapResult res;
  res.point = means.colwise().mean().transpose();
  res.plain.resize(B, K);
  res.corrected.resize(B, K);
  for (int s = 0; s < l.S; ++s) res.stratum_sizes.push_back(static_cast<int>(l.rows[s].size()));
  std::vector<double> scale(l.S);
  for (int s = 0; s < l.S; ++s) {
    const double n = static_cast<double>(l.rows[s].size());
    scale[s] = n > 1 ? std::sqrt(n / (n - 1.0)) : 1.0;
  }
  const std::uint64_t base = splitmix64(opt.seed);

  auto run_range = [&](int r0, int r1) {
    Eigen::RowVectorXd acc(K), sum_plain(K), sum_corr(K), resampled(K);
    for (int r = r0; r < r1; ++r) {
      boost::random::mt19937_64 gen(splitmix64(base ^ static_cast<std::uint64_t>(r)));
      sum_plain.setZero();
      sum_corr.setZero();
      for (int s = 0; s < l.S; ++s) {
        const auto& rows = l.rows[s];
        const int n = static_cast<int>(rows.size());
        boost::random::uniform_int_distribution<int> pick(0, n - 1);
        acc.setZero();
        for (int j = 0; j < n; ++j) acc += data.row(rows[pick(gen)]);
        resampled = acc / static_cast<double>(n);
        sum_plain += resampled;
        sum_corr += means.row(s) + scale[s] * (resampled - means.row(s));
      }
      res.plain.row(r) = sum_plain / static_cast<double>(l.S);
      res.corrected.row(r) = sum_corr / static_cast<double>(l.S);
    }
  };

  unsigned threads = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(B));
  if (threads <= 1) {
    run_range(0, B);
  } else {
    std::vector<std::thread> pool;
    const int chunk = (B + static_cast<int>(threads) - 1) / static_cast<int>(threads);
    for (unsigned t = 0; t < threads; ++t) {
      const int r0 = static_cast<int>(t) * chunk, r1 = std::min(B, r0 + chunk);
      if (r0 >= r1) break;
      pool.emplace_back(run_range, r0, r1);
    }
    for (auto& th : pool) th.join();
  }
  return res;
}

Interval percentile_interval(const Eigen::Ref<const Eigen::VectorXd>& replicates, double level) {
  if (!(level > 0.0 && level < 1.0)) throw std::invalid_argument("percentile_interval: level must be in (0, 1)");
  std::vector<double> v(replicates.data(), replicates.data() + replicates.size());
  std::sort(v.begin(), v.end());
  const double a = (1.0 - level) / 2.0;
  return {quantile7_sorted(v, a), quantile7_sorted(v, 1.0 - a)};
}

}  // namespace analysis
