#pragma once
// Stratified bootstrap of "the mean over strata of the stratum means" (analysis/README.md).
//
// Data: an Eigen matrix with one row per matched triplet and one column per comparison
// (e.g. the four log ratios d = ln(p99_reclaim / p99_comparator), or absolute differences in us).
// Strata: one label per row (stratum = (vm, regime)); strata weigh equally.
// Each replicate resamples, within every stratum, n_s rows with replacement; the SAME row
// indices serve every column (the four comparisons stay paired).
//
// Determinism: replicate r draws from boost::random::mt19937_64 seeded with
// splitmix64(splitmix64(seed) ^ r) and writes its own row of the output, so the result is
// bit-identical for a given seed whatever the thread count.
//
// Speed (ours; same numbers as a plain per-replicate Boost loop, bit for bit, checked by
// tests/unit/analysis/test_mt64_prefix.cpp and the pinned golden): the first N outputs of the
// 8 generators of a batch of replicates are computed together from the seeding chain
// (analysis/stats/mt64_prefix.hpp, AVX2/AVX-512 clones where the CPU has them), Boost's
// uniform_int_distribution rule without a 64-bit division, rows laid out contiguously per
// stratum and the K = 1, 2, 4 sums held in registers. About 0.3 us per replicate for 60 rows x
// 4 columns in 20 strata on one core (tests/bench/analysis). Threads take chunks of 256
// replicates from a shared counter (a descheduled thread does not hold up the rest).
#include <Eigen/Dense>

#include <cstdint>
#include <vector>

namespace analysis {

/// Bootstrap settings. replicates = B (default 10,000, analysis/README.md); threads = 0 -> hardware.
struct BootstrapOptions {
  int replicates = 10000;
  std::uint64_t seed = 1;
  unsigned threads = 0;
};

/// Output of stratified_bootstrap. K = data columns, S = strata, B = replicates.
struct BootstrapResult {
  Eigen::VectorXd point;          ///< K: mean over strata of stratum means (the estimate)
  Eigen::MatrixXd plain;          ///< B x K: replicate estimates, ordinary resampling (study's interval)
  Eigen::MatrixXd corrected;      ///< B x K: each resampled stratum mean rescaled about the stratum
                                  ///< mean by sqrt(n/(n-1)) (n = 1: factor 1) (analysis/README.md)
  std::vector<int> stratum_sizes; ///< S: triplets per stratum, in stratum-label order (0..S-1)
};

/// SplitMix64 finaliser (Steele et al.); used to derive per-replicate seeds.
std::uint64_t splitmix64(std::uint64_t x);

/// Runs the stratified bootstrap. `strata[i]` in [0, S) labels row i; every label in 0..S-1 must
/// occur. Errors: std::invalid_argument when rows/labels mismatch, a label is missing or negative,
/// data has a non-finite value, or replicates < 1.
BootstrapResult stratified_bootstrap(const Eigen::MatrixXd& data, const std::vector<int>& strata,
                                     const BootstrapOptions& opt);

/// Mean over strata of stratum means, per column (K). Same errors as stratified_bootstrap.
Eigen::VectorXd stratified_mean(const Eigen::MatrixXd& data, const std::vector<int>& strata);

/// Two-sided percentile interval from replicate values of one column: type-7 quantiles at
/// (1 - level)/2 and 1 - (1 - level)/2. level e.g. 1 - 0.05/4 = 0.9875 (study).
struct Interval {
  double lower = 0, upper = 0;
};
Interval percentile_interval(const Eigen::Ref<const Eigen::VectorXd>& replicates, double level);

/// Simultaneous per-comparison level 1 - alpha/m (Bonferroni; study: 0.05/4 -> 0.9875).
inline double simultaneous_level(double alpha, int m) { return 1.0 - alpha / m; }

}  // namespace analysis
