#pragma once
// Measured (simulated) coverage of the primary analysis's intervals for a design given as
// matched blocks per (vm, regime) stratum and a family of m comparisons between the k arms of a
// block: synthetic datasets with a known truth go through the same stratified bootstrap and
// percentile interval as the report (analysis/stats/bootstrap.hpp), and the share of intervals
// that contain the truth is counted. It checks the analytic figure (coverage.hpp) at the design
// at hand; `harness plan --simulate-coverage` runs it for the planned design with the campaign's
// arms and declared family, and the statistics test (tests/statistics/analysis) for the
// repository's designs with the study's family (k = 3 arms, its four comparisons).
//
// Data model (ours; stated in every output): per block i in stratum s and comparison j,
//   d_ij = ln(true ratio_j) + alpha_s + e_ij, alpha_s ~ N(0, 0.3^2) fixed per dataset,
// equal within-stratum variances (the analytic figure's assumption). Independent: e_ij ~
// N(0, 0.1^2) independent over j. Block ("triplet", the study's word; any k):
// e_ij = u_i,treatment_j,c_j - u_i,comparator_j,c_j from case-level noise u ~ N(0, 0.1^2 / 2) per
// (arm, canary) of the block, so two comparisons of one canary that share an arm share that
// case (correlation +-0.5), as in a matched block. The estimand is the equal-weight mean over
// strata: ln(true ratio_j) + mean_s alpha_s. The truth: the study's Table 4 estimate for one of
// its four comparisons, 1 for any other (any value would do: the interval is shift-equivariant).
//
// The bootstrap (simulation_bootstrap below) is the report's estimator (bootstrap.hpp: n_s rows
// resampled with replacement within each stratum, the same rows for all m columns, plain and
// sqrt(n/(n-1))-corrected stratum means) and the interval is the same type-7 percentile
// interval, decided by quantile7_interval_contains. Only the random stream differs: one
// generator per dataset instead of one per replicate, which makes 2,000 x 10,000 replicates
// cheap enough for `harness plan` (ours; tests/unit/analysis checks that both bootstraps give
// the same replicate distribution).
//
// Determinism: dataset j draws its data from boost::random::mt19937_64 seeded with
// splitmix64(splitmix64(seed) ^ 2j) and its replicates from one seeded with
// splitmix64(splitmix64(seed) ^ (2j + 1)); per block the draws are alpha first (per dataset),
// then e_i0..e_i(m-1) (independent) or u per arm in block order, per canary in Canary order
// (block), so the study's family draws exactly what the three-arm simulation drew before. Datasets
// are handed to workers from a shared counter and each writes its own slot, so the result is the
// same for a seed whatever the thread count.
#include "analysis/stats/bootstrap.hpp"

#include "analysis/data/arms.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace analysis {

/// How the m comparisons' errors relate (see the file comment). Triplet: through the cases of
/// the matched block they share (k arms; the study's word for k = 3).
enum class CoverageModel { Independent, Triplet };

/// "independent" | "triplet".
const char* coverage_model_name(CoverageModel m);

/// One comparison of the simulated family: ratio treatment / comparator of one canary's p99.
struct SimComparison {
  Canary canary = Canary::Compute;
  int treatment = 0, comparator = 0;  ///< positions of the two arms in the block (0..k-1)
  double true_ratio = 1;              ///< the truth (see the file comment)
  std::string label;                  ///< comparison_label (arms.hpp): "<canary>: <treatment> / <comparator>"
};

/// The family simulated: k arms per matched block and m comparisons between them.
struct SimFamily {
  int arms = 0;                             ///< k
  std::vector<SimComparison> comparisons;   ///< m, in the family's order (one output row each)
};

/// The family of a campaign: `arms` its arm names in block order (k), `family` its declared
/// comparisons; the truth of a study comparison (same canary, treatment and comparator names as
/// one of study_comparisons()) is the study's Table 4 estimate (study_facts.hpp), else 1.
/// Errors: std::invalid_argument naming the comparison whose arm is not in `arms`, and for no
/// comparison or fewer than two arms.
SimFamily sim_family(const std::vector<std::string>& arms, const std::vector<ComparisonDef>& family);

/// The study's family: its three arms in its order (kStudyArms), its four comparisons in Table 4
/// order with Table 4's estimates as truth (the default of CoverageSimOptions).
const SimFamily& study_sim_family();

/// Simulation settings. Defaults: 2,000 datasets x B = 10,000 (the report's B), level 0.9875,
/// the study's family.
struct CoverageSimOptions {
  int datasets = 2000;
  int replicates = 10000;
  double level = 0.9875;       ///< per-comparison interval level (study: 1 - 0.05/4)
  std::uint64_t seed = 1;
  unsigned threads = 0;        ///< 0 = hardware concurrency
  CoverageModel model = CoverageModel::Independent;
  SimFamily family = study_sim_family();  ///< k arms, m comparisons
};

/// Measured coverage. Shares of the datasets (0..1).
struct CoverageSimResult {
  std::vector<int> stratum_sizes;   ///< the design simulated (matched blocks per stratum)
  CoverageSimOptions options;
  /// Per comparison of options.family (m, its order): prespecified, corrected interval.
  std::vector<double> plain, corrected;
  double plain_pooled = 0, corrected_pooled = 0;  ///< mean over the m comparisons
  double plain_joint = 0, corrected_joint = 0;    ///< all m intervals cover at once
  /// Binomial standard error of a share p estimated from `n` independent trials.
  static double standard_error(double p, int n);
  /// Standard error of the pooled figures: the m comparisons are independent trials under
  /// CoverageModel::Independent (m x datasets), not under Triplet (datasets).
  double pooled_trials() const;
  double seconds = 0;               ///< wall time of the simulation, s
};

/// The simulation's bootstrap of one T x m dataset (m >= 1 comparisons) whose rows are grouped by
/// stratum in order (stratum_sizes[0] rows of stratum 0, then stratum 1, ...): B replicates in
/// plain / corrected (B x m), stratum_sizes and point as stratified_bootstrap. Errors:
/// std::invalid_argument when the sizes do not add up to the rows, a size is < 1, the data has no
/// column or B < 1.
BootstrapResult simulation_bootstrap(const Eigen::MatrixXd& data, const std::vector<int>& stratum_sizes, int replicates,
                                     std::uint64_t seed);

/// Runs the simulation for `stratum_sizes` (matched blocks per stratum, each >= 1) and
/// opt.family. Errors: std::invalid_argument for an empty design, a stratum size < 1, datasets
/// < 1, B below the percentile interval's minimum at this level (10 replicates in each tail), a
/// family with no comparison or a comparison whose arm position is not in 0..k-1 or whose
/// treatment is its comparator.
CoverageSimResult simulate_coverage(const std::vector<int>& stratum_sizes, const CoverageSimOptions& opt = {});

/// For `harness plan` and the statistics test: the design, k, m and model; per interval
/// (prespecified, corrected) the per-comparison figures in family order, pooled (with its SE)
/// and joint; then one row per comparison with its label and both figures.
std::string format_coverage_sim(const CoverageSimResult& r);

}  // namespace analysis
