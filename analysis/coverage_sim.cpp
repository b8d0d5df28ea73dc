// Simulated coverage of the primary intervals (see coverage_sim.hpp).
#include "analysis/coverage_sim.hpp"

#include "analysis/bootstrap.hpp"
#include "analysis/coverage.hpp"
#include "analysis/quantile.hpp"

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <span>
#include <stdexcept>
#include <thread>

namespace analysis {

const char* coverage_model_name(CoverageModel m) {
  return m == CoverageModel::Independent ? "independent" : "triplet";
}

double CoverageSimResult::standard_error(double p, int n) { return n > 0 ? std::sqrt(p * (1 - p) / n) : 0.0; }

double CoverageSimResult::pooled_trials() const {
  return options.model == CoverageModel::Independent ? 4.0 * options.datasets : options.datasets;
}

namespace {

// The study's published ratios as the truth (any value would do: the interval is shift-equivariant).
constexpr std::array<double, 4> kTrue{0.938, 0.704, 0.993, 0.765};
constexpr double kStratumSd = 0.3, kErrorSd = 0.1;

/// Uniform index in [0, n) from 32 random bits, exactly uniform (Lemire's multiply-shift with
/// rejection of the 2^32 mod n short bucket).
struct Uniform32 {
  std::uint32_t n = 1, threshold = 0;
  explicit Uniform32(int k) : n(static_cast<std::uint32_t>(k)), threshold(static_cast<std::uint32_t>(-n) % n) {}
};

/// 32-bit halves of a boost::random::mt19937_64 stream.
struct Bits32 {
  boost::random::mt19937_64 gen;
  std::uint64_t word = 0;
  bool half = false;
  explicit Bits32(std::uint64_t seed) : gen(seed) {}
  std::uint32_t next() {
    half = !half;
    if (half) {
      word = gen();
      return static_cast<std::uint32_t>(word);
    }
    return static_cast<std::uint32_t>(word >> 32);
  }
  std::uint32_t index(const Uniform32& u) {
    for (;;) {
      const std::uint64_t m = static_cast<std::uint64_t>(next()) * u.n;
      if (static_cast<std::uint32_t>(m) >= u.threshold) return static_cast<std::uint32_t>(m >> 32);
    }
  }
};

/// The primary analysis's bootstrap of one dataset, specialised for the simulation: each replicate
/// resamples n_s rows with replacement within every stratum (the same rows for the four columns)
/// and averages the stratum means, plain and with each resampled stratum mean rescaled about the
/// stratum mean by sqrt(n/(n-1)) (n = 1: factor 1), exactly the estimator of bootstrap.hpp. What
/// differs is only the random stream: one generator per dataset instead of one per replicate
/// (the report's thread-count independence is not needed where datasets are the parallel unit),
/// so the replicates have the same distribution, not the same bits. Fills plain / corrected, each
/// 4 x B (column k from k * B).
void bootstrap_dataset(const Eigen::MatrixXd& d, const std::vector<int>& n, int B, std::uint64_t seed,
                       std::vector<double>& plain, std::vector<double>& corrected) {
  const int S = static_cast<int>(n.size());
  struct Stratum {
    int first = 0, n = 0;
    double scale = 1;
    std::array<double, 4> mean{};
  };
  std::vector<Stratum> multi;  // strata with n > 1: resampled
  std::vector<Uniform32> pick;
  std::array<double, 4> fixed{};  // sum over one-triplet strata of their only row: the same in every replicate
  int row = 0;
  for (int s = 0; s < S; ++s) {
    if (n[s] == 1) {
      for (int k = 0; k < 4; ++k) fixed[k] += d(row, k);
    } else {
      Stratum st{row, n[s], std::sqrt(n[s] / (n[s] - 1.0)), {}};
      for (int i = 0; i < n[s]; ++i)
        for (int k = 0; k < 4; ++k) st.mean[k] += d(row + i, k) / n[s];
      multi.push_back(st);
      pick.emplace_back(n[s]);
    }
    row += n[s];
  }
  // Rows contiguous, 4 doubles each (Eigen is column-major).
  std::vector<double> rows(static_cast<std::size_t>(d.rows()) * 4);
  for (Eigen::Index i = 0; i < d.rows(); ++i)
    for (int k = 0; k < 4; ++k) rows[static_cast<std::size_t>(i) * 4 + k] = d(i, k);
  plain.assign(static_cast<std::size_t>(4) * B, 0.0);
  corrected.assign(static_cast<std::size_t>(4) * B, 0.0);
  Bits32 bits(seed);
  for (int r = 0; r < B; ++r) {
    double sp[4] = {fixed[0], fixed[1], fixed[2], fixed[3]}, sc[4] = {fixed[0], fixed[1], fixed[2], fixed[3]};
    for (std::size_t m = 0; m < multi.size(); ++m) {
      const Stratum& st = multi[m];
      double acc[4] = {0, 0, 0, 0};
      for (int j = 0; j < st.n; ++j) {
        const double* x = rows.data() + static_cast<std::size_t>(st.first + static_cast<int>(bits.index(pick[m]))) * 4;
        for (int k = 0; k < 4; ++k) acc[k] += x[k];
      }
      for (int k = 0; k < 4; ++k) {
        const double res = acc[k] / st.n;
        sp[k] += res;
        sc[k] += st.mean[k] + st.scale * (res - st.mean[k]);
      }
    }
    for (int k = 0; k < 4; ++k) {
      plain[static_cast<std::size_t>(k) * B + r] = sp[k] / S;
      corrected[static_cast<std::size_t>(k) * B + r] = sc[k] / S;
    }
  }
}

// Per dataset: bit k (0..3) plain interval k covers, bit 4 + k corrected interval k covers.
std::uint8_t one_dataset(const std::vector<int>& labels, const std::vector<int>& n, const CoverageSimOptions& o,
                         std::uint64_t base, std::uint64_t j, std::vector<double>& plain,
                         std::vector<double>& corrected) {
  const int strata = static_cast<int>(n.size());
  boost::random::mt19937_64 gen(splitmix64(base ^ (2 * j)));
  boost::random::normal_distribution<double> z(0.0, 1.0);
  std::vector<double> alpha(static_cast<std::size_t>(strata));
  double mean_alpha = 0;
  for (auto& a : alpha) {
    a = kStratumSd * z(gen);
    mean_alpha += a / strata;
  }
  const auto T = static_cast<Eigen::Index>(labels.size());
  Eigen::MatrixXd d(T, 4);
  for (Eigen::Index i = 0; i < T; ++i) {
    const double a = alpha[static_cast<std::size_t>(labels[static_cast<std::size_t>(i)])];
    if (o.model == CoverageModel::Independent) {
      for (int k = 0; k < 4; ++k) d(i, k) = std::log(kTrue[k]) + a + kErrorSd * z(gen);
    } else {
      // u[config][canary], config 0 static, 1 delayed, 2 reclaim; sd so that a difference has kErrorSd.
      double u[3][2];
      for (auto& cfg : u)
        for (double& v : cfg) v = kErrorSd / std::sqrt(2.0) * z(gen);
      for (int k = 0; k < 4; ++k) {
        const int canary = k / 2, comparator = k % 2;  // primary_comparisons() order
        d(i, k) = std::log(kTrue[k]) + a + u[2][canary] - u[comparator][canary];
      }
    }
  }
  bootstrap_dataset(d, n, o.replicates, splitmix64(base ^ (2 * j + 1)), plain, corrected);
  const double lo = (1 - o.level) / 2, hi = 1 - lo;
  const auto B = static_cast<std::size_t>(o.replicates);
  std::uint8_t bits = 0;
  for (int k = 0; k < 4; ++k) {
    const double truth = std::log(kTrue[k]) + mean_alpha;
    const std::span<const double> p(plain.data() + k * B, B), c(corrected.data() + k * B, B);
    if (quantile7_interval_contains(p, lo, hi, truth)) bits |= static_cast<std::uint8_t>(1u << k);
    if (quantile7_interval_contains(c, lo, hi, truth)) bits |= static_cast<std::uint8_t>(1u << (4 + k));
  }
  return bits;
}

}  // namespace

BootstrapResult simulation_bootstrap(const Eigen::MatrixXd& data, const std::vector<int>& n, int B, std::uint64_t seed) {
  if (data.cols() != 4) throw std::invalid_argument("simulation bootstrap: data must have 4 columns");
  if (B < 1) throw std::invalid_argument("simulation bootstrap: replicates must be >= 1");
  long total = 0;
  std::vector<int> labels;
  for (std::size_t s = 0; s < n.size(); ++s) {
    if (n[s] < 1) throw std::invalid_argument("simulation bootstrap: a stratum with fewer than 1 row");
    total += n[s];
    for (int i = 0; i < n[s]; ++i) labels.push_back(static_cast<int>(s));
  }
  if (n.empty() || total != data.rows())
    throw std::invalid_argument("simulation bootstrap: stratum sizes do not add up to the rows");
  std::vector<double> plain, corrected;
  bootstrap_dataset(data, n, B, seed, plain, corrected);
  BootstrapResult r;
  r.point = stratified_mean(data, labels);
  r.plain = Eigen::Map<const Eigen::MatrixXd>(plain.data(), B, 4);
  r.corrected = Eigen::Map<const Eigen::MatrixXd>(corrected.data(), B, 4);
  r.stratum_sizes = n;
  return r;
}

CoverageSimResult simulate_coverage(const std::vector<int>& n, const CoverageSimOptions& o) {
  if (n.empty()) throw std::invalid_argument("coverage simulation: empty design (no strata)");
  for (int v : n)
    if (v < 1) throw std::invalid_argument("coverage simulation: a stratum with fewer than 1 triplet");
  if (o.datasets < 1) throw std::invalid_argument("coverage simulation: datasets must be >= 1");
  if (!(o.level > 0 && o.level < 1)) throw std::invalid_argument("coverage simulation: level must be in (0, 1)");
  const double tail = (1 - o.level) / 2;
  if (tail * o.replicates < 10)
    throw std::invalid_argument(fmt::format(
        "coverage simulation: B = {} leaves fewer than 10 replicates in each tail of a {:.4g}% interval (minimum B = {})",
        o.replicates, o.level * 100, static_cast<int>(std::ceil(10 / tail))));
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int> labels;
  for (std::size_t s = 0; s < n.size(); ++s)
    for (int i = 0; i < n[s]; ++i) labels.push_back(static_cast<int>(s));
  const std::uint64_t base = splitmix64(o.seed);
  std::vector<std::uint8_t> bits(static_cast<std::size_t>(o.datasets));
  std::atomic<int> next{0};
  auto work = [&] {
    std::vector<double> plain, corrected;  // reused from dataset to dataset
    for (int j; (j = next.fetch_add(1, std::memory_order_relaxed)) < o.datasets;)
      bits[static_cast<std::size_t>(j)] = one_dataset(labels, n, o, base, static_cast<std::uint64_t>(j), plain, corrected);
  };
  unsigned threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(o.datasets));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();

  CoverageSimResult r;
  r.stratum_sizes = n;
  r.options = o;
  std::array<int, 8> count{};
  int jp = 0, jc = 0;
  for (std::uint8_t b : bits) {
    for (int k = 0; k < 8; ++k) count[k] += (b >> k) & 1;
    jp += (b & 0x0f) == 0x0f;
    jc += (b & 0xf0) == 0xf0;
  }
  const double N = o.datasets;
  for (int k = 0; k < 4; ++k) {
    r.plain[k] = count[k] / N;
    r.corrected[k] = count[4 + k] / N;
    r.plain_pooled += r.plain[k] / 4;
    r.corrected_pooled += r.corrected[k] / 4;
  }
  r.plain_joint = jp / N;
  r.corrected_joint = jc / N;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string format_coverage_sim(const CoverageSimResult& r) {
  const std::string design = design_text(r.stratum_sizes);
  const auto& o = r.options;
  const double se_p = CoverageSimResult::standard_error(r.plain_pooled, static_cast<int>(r.pooled_trials()));
  const double se_c = CoverageSimResult::standard_error(r.corrected_pooled, static_cast<int>(r.pooled_trials()));
  return fmt::format(
      "simulated coverage ({}; {} datasets x B = {}, seed {}, {} errors, {:.1f} s):\n"
      "  prespecified {:.2f}% interval: per comparison {:.4f} {:.4f} {:.4f} {:.4f}, pooled {:.4f} (SE {:.4f}); "
      "all four jointly {:.4f}\n"
      "  corrected interval:            per comparison {:.4f} {:.4f} {:.4f} {:.4f}, pooled {:.4f} (SE {:.4f}); "
      "all four jointly {:.4f}\n",
      design, o.datasets, o.replicates, o.seed, coverage_model_name(o.model), r.seconds, o.level * 100, r.plain[0],
      r.plain[1], r.plain[2], r.plain[3], r.plain_pooled, se_p, r.plain_joint, r.corrected[0], r.corrected[1],
      r.corrected[2], r.corrected[3], r.corrected_pooled, se_c, r.corrected_joint);
}

}  // namespace analysis
