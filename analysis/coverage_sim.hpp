#pragma once
// Measured (simulated) coverage of the primary analysis's intervals for a design given as
// triplets per (vm, regime) stratum: synthetic datasets with a known truth go through the
// same stratified bootstrap and percentile interval as the report (analysis/bootstrap.hpp),
// and the share of intervals that contain the truth is counted. It checks the analytic
// figure (coverage.hpp) at the design at hand; `harness plan --simulate-coverage` runs it
// for the planned design and the statistics test (tests/statistics/analysis) for the
// repository's designs.
//
// Data model (ours; stated in every output): per triplet i in stratum s and comparison k,
//   d_ik = ln(true ratio_k) + alpha_s + e_ik, alpha_s ~ N(0, 0.3^2) fixed per dataset,
// equal within-stratum variances (the analytic figure's assumption). Independent: e_ik ~
// N(0, 0.1^2) independent over k. Triplet: e_ik = u_i,reclaim,c - u_i,comparator,c from
// case-level noise u ~ N(0, 0.1^2 / 2) per (configuration, canary), so the two comparisons
// of one canary share the reclaim case (correlation 0.5), as in a matched triplet.
// The estimand is the equal-weight mean over strata: ln(true ratio_k) + mean_s alpha_s.
//
// The bootstrap (simulation_bootstrap below) is the report's estimator (bootstrap.hpp: n_s rows
// resampled with replacement within each stratum, the same rows for all four columns, plain and
// sqrt(n/(n-1))-corrected stratum means) and the interval is the same type-7 percentile
// interval, decided by quantile7_interval_contains. Only the random stream differs: one
// generator per dataset instead of one per replicate, which makes 2,000 x 10,000 replicates
// cheap enough for `harness plan` (ours; tests/unit/analysis checks that both bootstraps give
// the same replicate distribution).
//
// Determinism: dataset j draws its data from boost::random::mt19937_64 seeded with
// splitmix64(splitmix64(seed) ^ 2j) and its replicates from one seeded with
// splitmix64(splitmix64(seed) ^ (2j + 1)); datasets are handed to workers from a shared
// counter and each writes its own slot, so the result is the same for a seed whatever the
// thread count.
#include "analysis/bootstrap.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace analysis {

/// How the four comparisons' errors relate (see the file comment).
enum class CoverageModel { Independent, Triplet };

/// "independent" | "triplet".
const char* coverage_model_name(CoverageModel m);

/// Simulation settings. Defaults: 2,000 datasets x B = 10,000 (the report's B), level 0.9875.
struct CoverageSimOptions {
  int datasets = 2000;
  int replicates = 10000;
  double level = 0.9875;       ///< per-comparison interval level (study: 1 - 0.05/4)
  std::uint64_t seed = 1;
  unsigned threads = 0;        ///< 0 = hardware concurrency
  CoverageModel model = CoverageModel::Independent;
};

/// Measured coverage. Shares of the datasets (0..1).
struct CoverageSimResult {
  std::vector<int> stratum_sizes;   ///< the design simulated (triplets per stratum)
  CoverageSimOptions options;
  std::array<double, 4> plain{}, corrected{};  ///< per comparison: prespecified, corrected interval
  double plain_pooled = 0, corrected_pooled = 0;  ///< mean over the four comparisons
  double plain_joint = 0, corrected_joint = 0;    ///< all four intervals cover at once
  /// Binomial standard error of a share p estimated from `n` independent trials.
  static double standard_error(double p, int n);
  /// Standard error of the pooled figures: the four comparisons are independent trials under
  /// CoverageModel::Independent (4 x datasets), not under Triplet (datasets).
  double pooled_trials() const;
  double seconds = 0;               ///< wall time of the simulation, s
};

/// The simulation's bootstrap of one T x 4 dataset whose rows are grouped by stratum in order
/// (stratum_sizes[0] rows of stratum 0, then stratum 1, ...): B replicates in plain / corrected
/// (B x 4), stratum_sizes and point as stratified_bootstrap. Errors: std::invalid_argument when
/// the sizes do not add up to the rows, a size is < 1, the data is not T x 4 or B < 1.
BootstrapResult simulation_bootstrap(const Eigen::MatrixXd& data, const std::vector<int>& stratum_sizes, int replicates,
                                     std::uint64_t seed);

/// Runs the simulation for `stratum_sizes` (each >= 1). Errors: std::invalid_argument for an
/// empty design, a stratum size < 1, datasets < 1, or B below the percentile interval's
/// minimum at this level (10 replicates in each tail).
CoverageSimResult simulate_coverage(const std::vector<int>& stratum_sizes, const CoverageSimOptions& opt = {});

/// One line per quantity, for `harness plan` and the statistics test: per comparison, pooled
/// (with its standard error) and joint, for both intervals, and the design and model.
std::string format_coverage_sim(const CoverageSimResult& r);

}  // namespace analysis
