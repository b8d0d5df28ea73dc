#pragma once
// A/B regression comparison (design ab-pairs; `harness check`): per metric, the ratio
// candidate / baseline with a stratified bootstrap percentile interval, judged against the
// campaign's tolerance. Ours (the study has no A/B design); the machinery is the primary
// analysis's (analysis/stats/bootstrap.hpp).
//
// Pairs: a baseline case and a candidate case with the same vm, regime, repeat and
// configuration (spec_json variant.pair_id). Stratum = (vm, regime, configuration); strata
// weigh equally. Estimator: ratio of stratified means, R = M_c / M_b, where M_v is the mean
// over strata of the stratum mean of variant v's values (a ratio of means, not a mean of
// log ratios: counters such as refaults or swap-out may be 0 in a case). Each bootstrap
// replicate resamples the pairs within every stratum (same indices for both members) and
// recomputes R; the interval is the type-7 percentile interval of the replicates at level
// 1 - alpha / m, m = number of metrics that have a tolerance (Bonferroni, like the study's
// 0.05 / 4). `harness check --until-decided` splits alpha over its K looks too
// (1 - alpha / (m K)) and uses the delta-method t interval instead (analysis/stats/sequential.hpp).
// A pair enters a metric only when both members are completed, usable cases with the metric
// measured; a lost or infra_failed case is caught by the absolute assertions
// (all_cases_completed), not here.
#include "analysis/data/ab_pairs.hpp"
#include "analysis/stats/paired_ratio.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace analysis {

/// What compare_variants needs of an A/B campaign (harness/campaign/model/campaign.hpp
/// Campaign::regression_design fills it from the campaign file).
struct RegressionDesign {
  std::string file;                   ///< the campaign file, for errors
  std::string design;                 ///< design.kind: only "ab-pairs" has variants to compare
  std::uint64_t seed = 0;             ///< bootstrap seed (the campaign's seed)
  int bootstrap_replicates = 10000;   ///< B (analysis.bootstrap_replicates)
  double alpha = 0.05;                ///< family-wise alpha over the toleranced metrics (regression.alpha)
  std::vector<MetricTolerance> tolerances;  ///< regression.tolerances, in file order
};

/// Compares the candidate cases of `candidate_db` with the baseline cases of `baseline_db`
/// (the same file for a one-DB A/B run; a stored baseline otherwise). Tolerances, alpha and
/// the bootstrap seed/replicates come from `d` (seed = d.seed, B = d.bootstrap_replicates);
/// the level is comparison_level(alpha, m, rule.looks), the verdicts rule.verdicts'.
/// Errors: results::DbError when a DB cannot be read; std::runtime_error when `d` is not an
/// ab-pairs campaign or names a tolerance of no regression metric; std::invalid_argument when
/// rule.looks < 1.
std::vector<MetricComparison> compare_variants(const std::string& baseline_db, const std::string& candidate_db,
                                               const RegressionDesign& d, const ComparisonRule& rule = {});

}  // namespace analysis
