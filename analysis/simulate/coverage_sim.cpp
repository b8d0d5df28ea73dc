// Simulated coverage of the primary intervals (see coverage_sim.hpp).
#include "analysis/simulate/coverage_sim.hpp"

#include "analysis/data/study_facts.hpp"

#include "analysis/stats/bootstrap.hpp"
#include "analysis/stats/coverage.hpp"
#include "analysis/stats/quantile.hpp"

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
  const double m = static_cast<double>(options.family.comparisons.size());
  return options.model == CoverageModel::Independent ? m * options.datasets : options.datasets;
}

SimFamily sim_family(const std::vector<std::string>& arms, const std::vector<ComparisonDef>& family) {
  if (arms.size() < 2) throw std::invalid_argument("coverage simulation: a matched block needs at least two arms");
  if (family.empty()) throw std::invalid_argument("coverage simulation: no comparison to simulate");
  auto position = [&](const std::string& name, const ComparisonDef& c) {
    const auto it = std::find(arms.begin(), arms.end(), name);
    if (it == arms.end())
      throw std::invalid_argument(
          fmt::format("coverage simulation: comparison '{}' names arm '{}', not one of the block's", c.label, name));
    return static_cast<int>(it - arms.begin());
  };
  const auto& study = study_comparisons();
  SimFamily f{static_cast<int>(arms.size()), {}};
  for (const auto& c : family) {
    double truth = 1;
    for (std::size_t j = 0; j < study.size() && j < kStudyComparisonCount; ++j)
      if (study[j].canary == c.canary && study[j].treatment == c.treatment && study[j].comparator == c.comparator)
        truth = kStudyTable4[j].estimate;
    f.comparisons.push_back({c.canary, position(c.treatment, c), position(c.comparator, c), truth, c.label});
  }
  return f;
}

const SimFamily& study_sim_family() {
  static const SimFamily f = [] {
    std::vector<std::string> arms;
    for (const auto& a : kStudyArms) arms.emplace_back(a.name);
    return sim_family(arms, study_comparisons());
  }();
  return f;
}

namespace {

constexpr double kStratumSd = 0.3, kErrorSd = 0.1;
/// The canaries of a block's cases (Canary: compute, sqlite), each arm's case has one of each.
constexpr std::size_t kCanaries = static_cast<std::size_t>(Canary::Sqlite) + 1;

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

/// The primary analysis's bootstrap of one T x m dataset, specialised for the simulation: each
/// replicate resamples n_s rows with replacement within every stratum (the same rows for the m
/// columns) and averages the stratum means, plain and with each resampled stratum mean rescaled
/// about the stratum mean by sqrt(n/(n-1)) (n = 1: factor 1), exactly the estimator of
/// bootstrap.hpp. What differs is only the random stream: one generator per dataset instead of
/// one per replicate (the report's thread-count independence is not needed where datasets are
/// the parallel unit), so the replicates have the same distribution, not the same bits. Fills
/// plain / corrected, each m x B (column k from k * B).
void bootstrap_dataset(const Eigen::MatrixXd& d, const std::vector<int>& n, int B, std::uint64_t seed,
                       std::vector<double>& plain, std::vector<double>& corrected) {
  const int S = static_cast<int>(n.size());
  const auto m = static_cast<std::size_t>(d.cols());
  struct Stratum {
    int first = 0, n = 0;
    double scale = 1;
    std::vector<double> mean;
  };
  std::vector<Stratum> multi;  // strata with n > 1: resampled
  std::vector<Uniform32> pick;
  std::vector<double> fixed(m, 0.0);  // sum over one-block strata of their only row: the same in every replicate
  int row = 0;
  for (int s = 0; s < S; ++s) {
    if (n[s] == 1) {
      for (std::size_t k = 0; k < m; ++k) fixed[k] += d(row, static_cast<Eigen::Index>(k));
    } else {
      Stratum st{row, n[s], std::sqrt(n[s] / (n[s] - 1.0)), std::vector<double>(m, 0.0)};
      for (int i = 0; i < n[s]; ++i)
        for (std::size_t k = 0; k < m; ++k) st.mean[k] += d(row + i, static_cast<Eigen::Index>(k)) / n[s];
      multi.push_back(std::move(st));
      pick.emplace_back(n[s]);
    }
    row += n[s];
  }
  // Rows contiguous, m doubles each (Eigen is column-major).
  std::vector<double> rows(static_cast<std::size_t>(d.rows()) * m);
  for (Eigen::Index i = 0; i < d.rows(); ++i)
    for (std::size_t k = 0; k < m; ++k) rows[static_cast<std::size_t>(i) * m + k] = d(i, static_cast<Eigen::Index>(k));
  plain.assign(m * static_cast<std::size_t>(B), 0.0);
  corrected.assign(m * static_cast<std::size_t>(B), 0.0);
  std::vector<double> sp(m), sc(m), acc(m);
  Bits32 bits(seed);
  for (int r = 0; r < B; ++r) {
    sp = fixed;
    sc = fixed;
    for (std::size_t t = 0; t < multi.size(); ++t) {
      const Stratum& st = multi[t];
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int j = 0; j < st.n; ++j) {
        const double* x = rows.data() + static_cast<std::size_t>(st.first + static_cast<int>(bits.index(pick[t]))) * m;
        for (std::size_t k = 0; k < m; ++k) acc[k] += x[k];
      }
      for (std::size_t k = 0; k < m; ++k) {
        const double res = acc[k] / st.n;
        sp[k] += res;
        sc[k] += st.mean[k] + st.scale * (res - st.mean[k]);
      }
    }
    for (std::size_t k = 0; k < m; ++k) {
      plain[k * static_cast<std::size_t>(B) + static_cast<std::size_t>(r)] = sp[k] / S;
      corrected[k * static_cast<std::size_t>(B) + static_cast<std::size_t>(r)] = sc[k] / S;
    }
  }
}

/// One dataset's T x m log ratios under o.model, drawn from `gen` in the order of the file
/// comment of coverage_sim.hpp (alpha per stratum, then per block its errors); `mean_alpha` set to
/// the mean of the stratum effects.
Eigen::MatrixXd draw_dataset(const std::vector<int>& labels, int strata, const CoverageSimOptions& o,
                             boost::random::mt19937_64& gen, double& mean_alpha) {
  boost::random::normal_distribution<double> z(0.0, 1.0);
  std::vector<double> alpha(static_cast<std::size_t>(strata));
  mean_alpha = 0;
  for (auto& a : alpha) {
    a = kStratumSd * z(gen);
    mean_alpha += a / strata;
  }
  const auto& fam = o.family.comparisons;
  const auto m = static_cast<Eigen::Index>(fam.size());
  const auto T = static_cast<Eigen::Index>(labels.size());
  // u[arm * kCanaries + canary]: case-level noise of the block, sd so that a difference has kErrorSd.
  std::vector<double> u(static_cast<std::size_t>(o.family.arms) * kCanaries);
  Eigen::MatrixXd d(T, m);
  for (Eigen::Index i = 0; i < T; ++i) {
    const double a = alpha[static_cast<std::size_t>(labels[static_cast<std::size_t>(i)])];
    if (o.model == CoverageModel::Independent) {
      for (Eigen::Index k = 0; k < m; ++k) d(i, k) = std::log(fam[static_cast<std::size_t>(k)].true_ratio) + a + kErrorSd * z(gen);
      continue;
    }
    for (double& v : u) v = kErrorSd / std::sqrt(2.0) * z(gen);
    for (Eigen::Index k = 0; k < m; ++k) {
      const auto& c = fam[static_cast<std::size_t>(k)];
      const auto canary = static_cast<std::size_t>(c.canary);
      d(i, k) = std::log(c.true_ratio) + a + u[static_cast<std::size_t>(c.treatment) * kCanaries + canary] -
                u[static_cast<std::size_t>(c.comparator) * kCanaries + canary];
    }
  }
  return d;
}

/// Per dataset: covers[k] plain interval k covers, covers[m + k] corrected interval k covers.
void one_dataset(const std::vector<int>& labels, const std::vector<int>& n, const CoverageSimOptions& o,
                 std::uint64_t base, std::uint64_t j, std::vector<double>& plain, std::vector<double>& corrected,
                 std::span<std::uint8_t> covers) {
  boost::random::mt19937_64 gen(splitmix64(base ^ (2 * j)));
  double mean_alpha = 0;
  const Eigen::MatrixXd d = draw_dataset(labels, static_cast<int>(n.size()), o, gen, mean_alpha);
  bootstrap_dataset(d, n, o.replicates, splitmix64(base ^ (2 * j + 1)), plain, corrected);
  const double lo = (1 - o.level) / 2, hi = 1 - lo;
  const auto B = static_cast<std::size_t>(o.replicates);
  const std::size_t m = o.family.comparisons.size();
  for (std::size_t k = 0; k < m; ++k) {
    const double truth = std::log(o.family.comparisons[k].true_ratio) + mean_alpha;
    const std::span<const double> p(plain.data() + k * B, B), c(corrected.data() + k * B, B);
    covers[k] = quantile7_interval_contains(p, lo, hi, truth) ? 1 : 0;
    covers[m + k] = quantile7_interval_contains(c, lo, hi, truth) ? 1 : 0;
  }
}

}  // namespace

BootstrapResult simulation_bootstrap(const Eigen::MatrixXd& data, const std::vector<int>& n, int B, std::uint64_t seed) {
  if (data.cols() < 1) throw std::invalid_argument("simulation bootstrap: data must have at least one column");
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
  r.plain = Eigen::Map<const Eigen::MatrixXd>(plain.data(), B, data.cols());
  r.corrected = Eigen::Map<const Eigen::MatrixXd>(corrected.data(), B, data.cols());
  r.stratum_sizes = n;
  return r;
}

namespace {

/// The refusals of simulate_coverage (coverage_sim.hpp), std::invalid_argument each.
void check_simulation(const std::vector<int>& n, const CoverageSimOptions& o) {
  if (n.empty()) throw std::invalid_argument("coverage simulation: empty design (no strata)");
  for (int v : n)
    if (v < 1) throw std::invalid_argument("coverage simulation: a stratum with fewer than 1 matched block");
  if (o.datasets < 1) throw std::invalid_argument("coverage simulation: datasets must be >= 1");
  if (!(o.level > 0 && o.level < 1)) throw std::invalid_argument("coverage simulation: level must be in (0, 1)");
  const double tail = (1 - o.level) / 2;
  if (tail * o.replicates < 10)
    throw std::invalid_argument(fmt::format(
        "coverage simulation: B = {} leaves fewer than 10 replicates in each tail of a {:.4g}% interval (minimum B = {})",
        o.replicates, o.level * 100, static_cast<int>(std::ceil(10 / tail))));
  if (o.family.comparisons.empty()) throw std::invalid_argument("coverage simulation: no comparison to simulate");
  for (const auto& c : o.family.comparisons)
    if (c.treatment < 0 || c.treatment >= o.family.arms || c.comparator < 0 || c.comparator >= o.family.arms ||
        c.treatment == c.comparator)
      throw std::invalid_argument(fmt::format(
          "coverage simulation: comparison '{}' needs two different arms among the block's {}", c.label, o.family.arms));
}

/// Shares of the datasets from their coverage flags (datasets x 2m, one_dataset's layout).
void tally(const std::vector<std::uint8_t>& covers, std::size_t m, CoverageSimResult& r) {
  std::vector<int> count(2 * m, 0);
  int jp = 0, jc = 0;
  for (std::size_t j = 0; j + 2 * m <= covers.size(); j += 2 * m) {
    bool all_p = true, all_c = true;
    for (std::size_t k = 0; k < m; ++k) {
      count[k] += covers[j + k];
      count[m + k] += covers[j + m + k];
      all_p = all_p && covers[j + k];
      all_c = all_c && covers[j + m + k];
    }
    jp += all_p;
    jc += all_c;
  }
  const double N = r.options.datasets;
  r.plain.assign(m, 0.0);
  r.corrected.assign(m, 0.0);
  for (std::size_t k = 0; k < m; ++k) {
    r.plain[k] = count[k] / N;
    r.corrected[k] = count[m + k] / N;
    r.plain_pooled += r.plain[k] / static_cast<double>(m);
    r.corrected_pooled += r.corrected[k] / static_cast<double>(m);
  }
  r.plain_joint = jp / N;
  r.corrected_joint = jc / N;
}

}  // namespace

CoverageSimResult simulate_coverage(const std::vector<int>& n, const CoverageSimOptions& o) {
  check_simulation(n, o);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int> labels;
  for (std::size_t s = 0; s < n.size(); ++s)
    for (int i = 0; i < n[s]; ++i) labels.push_back(static_cast<int>(s));
  const std::uint64_t base = splitmix64(o.seed);
  const std::size_t m = o.family.comparisons.size();
  std::vector<std::uint8_t> covers(static_cast<std::size_t>(o.datasets) * 2 * m);
  std::atomic<int> next{0};
  auto work = [&] {
    std::vector<double> plain, corrected;  // reused from dataset to dataset
    for (int j; (j = next.fetch_add(1, std::memory_order_relaxed)) < o.datasets;)
      one_dataset(labels, n, o, base, static_cast<std::uint64_t>(j), plain, corrected,
                  std::span<std::uint8_t>(covers.data() + static_cast<std::size_t>(j) * 2 * m, 2 * m));
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
  tally(covers, m, r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string format_coverage_sim(const CoverageSimResult& r) {
  const auto& o = r.options;
  const std::size_t m = r.plain.size();
  const double se_p = CoverageSimResult::standard_error(r.plain_pooled, static_cast<int>(r.pooled_trials()));
  const double se_c = CoverageSimResult::standard_error(r.corrected_pooled, static_cast<int>(r.pooled_trials()));
  auto shares = [](const std::vector<double>& v) {
    std::string t;
    for (double x : v) t += fmt::format(" {:.4f}", x);
    return t;
  };
  std::string s = fmt::format(
      "simulated coverage ({}; {} datasets x B = {}, seed {}, {} errors, k = {} arms, m = {} comparisons, {:.1f} s):\n"
      "  prespecified {:.2f}% interval: per comparison{}, pooled {:.4f} (SE {:.4f}); all {} jointly {:.4f}\n"
      "  corrected interval:            per comparison{}, pooled {:.4f} (SE {:.4f}); all {} jointly {:.4f}\n",
      design_text(r.stratum_sizes), o.datasets, o.replicates, o.seed, coverage_model_name(o.model), o.family.arms, m,
      r.seconds, o.level * 100, shares(r.plain), r.plain_pooled, se_p, m, r.plain_joint, shares(r.corrected),
      r.corrected_pooled, se_c, m, r.corrected_joint);
  for (std::size_t k = 0; k < m && k < o.family.comparisons.size(); ++k)
    s += fmt::format("    {:<44} prespecified {:.4f}, corrected {:.4f}\n", o.family.comparisons[k].label, r.plain[k],
                     r.corrected[k]);
  return s;
}

}  // namespace analysis
