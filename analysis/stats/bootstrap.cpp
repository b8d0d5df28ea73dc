// Stratified bootstrap (see bootstrap.hpp).
#include "analysis/stats/bootstrap.hpp"

#include "analysis/stats/quantile.hpp"

#include "analysis/stats/mt64_prefix.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
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

namespace {

/// Everything one replicate reads, laid out contiguously: stratum s's rows as n_s x K
/// row-major doubles from off[s]; its mean (K) and scale; its index distribution.
struct Plan {
  int S = 0, K = 0, B = 0;
  int draws = 0;       // outputs one replicate consumes when nothing is rejected (strata with n > 1)
  int rows_total = 0;  // rows (sum of n_s)
  std::vector<int> n;
  std::vector<std::size_t> off;
  std::vector<double> rows, mean, scale;
  std::vector<UniformIndex> pick;
};

/// K doubles as one value held in registers: double (K = 1), one SSE2 pair (K = 2), pairs of
/// pairs (K = 4, 8; the comparisons and the absolute differences). Element-wise IEEE
/// operations, so the same bits as a scalar loop over K.
typedef double Pair __attribute__((vector_size(16)));
template <class H>
struct Two {
  H lo, hi;
};
template <class H>
inline Two<H> operator+(Two<H> a, Two<H> b) { return {a.lo + b.lo, a.hi + b.hi}; }
template <class H>
inline Two<H> operator-(Two<H> a, Two<H> b) { return {a.lo - b.lo, a.hi - b.hi}; }
template <class H>
inline Two<H> operator*(double f, Two<H> a) { return {f * a.lo, f * a.hi}; }
template <class H>
inline Two<H> operator/(Two<H> a, double d) { return {a.lo / d, a.hi / d}; }
template <class H>
inline Two<H>& operator+=(Two<H>& a, Two<H> b) { return a = a + b; }
template <int K>
struct Row;
template <>
struct Row<1> {
  using type = double;
};
template <>
struct Row<2> {
  using type = Pair;
};
template <>
struct Row<4> {
  using type = Two<Pair>;
};
template <>
struct Row<8> {
  using type = Two<Two<Pair>>;
};

/// The resampled rows of one replicate (lane `lane` of gen), in draw order: for every stratum
/// in label order, n_s offsets into Plan::rows (Boost draws nothing for a stratum of one row).
/// `off` holds Plan::rows_total entries.
void draw_rows(const Plan& p, Mt64Prefix& gen, int lane, std::uint32_t* off) {
  int draw = 0, t = 0;
  for (int s = 0; s < p.S; ++s) {
    const int n = p.n[s];
    const auto base = static_cast<std::uint32_t>(p.off[s]);
    if (n == 1) {
      off[t++] = base;
      continue;
    }
    const UniformIndex& pick = p.pick[s];
    for (int j = 0; j < n; ++j) {
      int idx;
      do idx = pick.map(gen.output(lane, draw++));
      while (idx < 0);
      off[t++] = base + static_cast<std::uint32_t>(idx * p.K);
    }
  }
}

/// Replicate r from its drawn rows: write row r of plain and corrected. The arithmetic, term for
/// term and in order, is that of the original per-replicate loop (acc from 0, acc / n,
/// sum_plain += m*, sum_corr += mean + scale * (m* - mean), / S), so the pinned numbers
/// (tests/unit/pinned) hold. Compile-time K (1, 2, 4, 8): values held in registers.
template <int K>
void replicate_fixed(const Plan& p, const std::uint32_t* off, int r, double* plain, double* corrected) {
  using V = typename Row<K>::type;
  auto load = [](const double* x) {
    V v;
    std::memcpy(&v, x, sizeof v);
    return v;
  };
  const double* rows = p.rows.data();
  V sp{}, sc{};
  for (int s = 0; s < p.S; ++s) {
    const int n = p.n[s];
    V acc{};
    for (int j = 0; j < n; ++j) acc += load(rows + *off++);
    const V m = load(p.mean.data() + static_cast<std::size_t>(s) * K);
    const V res = acc / static_cast<double>(n);
    sp += res;
    sc += m + p.scale[s] * (res - m);
  }
  const double Sd = static_cast<double>(p.S);
  const V op = sp / Sd, oc = sc / Sd;
  double a[K], b[K];
  std::memcpy(a, &op, sizeof a);
  std::memcpy(b, &oc, sizeof b);
  for (int k = 0; k < K; ++k) {
    plain[static_cast<std::size_t>(k) * p.B + r] = a[k];
    corrected[static_cast<std::size_t>(k) * p.B + r] = b[k];
  }
}

/// The same for any K, sums in `scratch` (3 K doubles).
void replicate_any(const Plan& p, const std::uint32_t* off, int r, double* scratch, double* plain, double* corrected) {
  const int K = p.K;
  double* acc = scratch;
  double* sp = scratch + K;
  double* sc = scratch + 2 * K;
  for (int k = 0; k < K; ++k) sp[k] = sc[k] = 0.0;
  for (int s = 0; s < p.S; ++s) {
    const int n = p.n[s];
    for (int k = 0; k < K; ++k) acc[k] = 0.0;
    for (int j = 0; j < n; ++j) {
      const double* row = p.rows.data() + *off++;
      for (int k = 0; k < K; ++k) acc[k] += row[k];
    }
    const double nd = static_cast<double>(n), f = p.scale[s];
    const double* m = p.mean.data() + static_cast<std::size_t>(s) * K;
    for (int k = 0; k < K; ++k) {
      const double res = acc[k] / nd;
      sp[k] += res;
      sc[k] += m[k] + f * (res - m[k]);
    }
  }
  const double Sd = static_cast<double>(p.S);
  for (int k = 0; k < K; ++k) {
    plain[static_cast<std::size_t>(k) * p.B + r] = sp[k] / Sd;
    corrected[static_cast<std::size_t>(k) * p.B + r] = sc[k] / Sd;
  }
}

/// Replicates are handed out in chunks of kChunk (a multiple of the 8 lanes) from `next`, so a
/// worker that the OS deschedules on a shared machine does not hold up the others; replicate r
/// writes only row r, so the result does not depend on who ran it.
constexpr int kChunk = 32 * Mt64Prefix::kLanes;

template <int KC>
void run_worker(const Plan& p, std::uint64_t base, std::atomic<int>& next, double* plain, double* corrected) {
  auto gen = std::make_unique<Mt64Prefix>();
  std::vector<double> scratch(3 * static_cast<std::size_t>(p.K));
  std::vector<std::uint32_t> off(static_cast<std::size_t>(Mt64Prefix::kLanes) * p.rows_total);
  std::uint64_t seeds[Mt64Prefix::kLanes];
  for (int r0; (r0 = next.fetch_add(kChunk, std::memory_order_relaxed)) < p.B;) {
    const int r1 = std::min(p.B, r0 + kChunk);
    for (int r = r0; r < r1; r += Mt64Prefix::kLanes) {
      const int lanes = std::min(Mt64Prefix::kLanes, r1 - r);
      for (int l = 0; l < lanes; ++l) seeds[l] = splitmix64(base ^ static_cast<std::uint64_t>(r + l));
      gen->fill(seeds, lanes, p.draws);
      for (int l = 0; l < lanes; ++l) draw_rows(p, *gen, l, off.data() + static_cast<std::size_t>(l) * p.rows_total);
      for (int l = 0; l < lanes; ++l) {
        const std::uint32_t* o = off.data() + static_cast<std::size_t>(l) * p.rows_total;
        if constexpr (KC > 0) replicate_fixed<KC>(p, o, r + l, plain, corrected);
        else replicate_any(p, o, r + l, scratch.data(), plain, corrected);
      }
    }
  }
}

}  // namespace

BootstrapResult stratified_bootstrap(const Eigen::MatrixXd& data, const std::vector<int>& strata,
                                     const BootstrapOptions& opt) {
  if (opt.replicates < 1) throw std::invalid_argument("bootstrap: replicates must be >= 1");
  const Layout l = layout_of(data, strata);
  const Eigen::MatrixXd means = stratum_means(data, l);
  const int K = static_cast<int>(data.cols());
  const int B = opt.replicates;

  BootstrapResult res;
  res.point = means.colwise().mean().transpose();
  res.plain.resize(B, K);
  res.corrected.resize(B, K);
  Plan p;
  p.S = l.S;
  p.K = K;
  p.B = B;
  for (int s = 0; s < l.S; ++s) {
    const int n = static_cast<int>(l.rows[s].size());
    res.stratum_sizes.push_back(n);
    p.n.push_back(n);
    p.off.push_back(p.rows.size());
    for (int r : l.rows[s])
      for (int k = 0; k < K; ++k) p.rows.push_back(data(r, k));
    for (int k = 0; k < K; ++k) p.mean.push_back(means(s, k));
    const double nd = static_cast<double>(n);
    p.scale.push_back(n > 1 ? std::sqrt(nd / (nd - 1.0)) : 1.0);
    p.pick.emplace_back(n);
    if (n > 1) p.draws += n;
    p.rows_total += n;
  }
  if (p.rows.size() > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("bootstrap: more than 2^32 data values");
  const std::uint64_t base = splitmix64(opt.seed);
  double* plain = res.plain.data();
  double* corrected = res.corrected.data();
  std::atomic<int> next{0};
  auto run = [&] {
    switch (K) {
      case 1: run_worker<1>(p, base, next, plain, corrected); break;
      case 2: run_worker<2>(p, base, next, plain, corrected); break;
      case 4: run_worker<4>(p, base, next, plain, corrected); break;
      case 8: run_worker<8>(p, base, next, plain, corrected); break;
      default: run_worker<0>(p, base, next, plain, corrected); break;
    }
  };

  unsigned threads = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>((B + kChunk - 1) / kChunk));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(run);
  run();  // this thread is one of the workers
  for (auto& th : pool) th.join();
  return res;
}

Interval percentile_interval(const Eigen::Ref<const Eigen::VectorXd>& replicates, double level) {
  if (!(level > 0.0 && level < 1.0)) throw std::invalid_argument("percentile_interval: level must be in (0, 1)");
  std::vector<double> v(replicates.data(), replicates.data() + replicates.size());
  const double a = (1.0 - level) / 2.0;
  const double lower = quantile7_select(v, a);
  return {lower, quantile7_select(v, 1.0 - a)};
}

}  // namespace analysis
