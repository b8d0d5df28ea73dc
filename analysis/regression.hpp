#pragma once
// A/B regression comparison (design ab-pairs; `harness check`): per metric, the ratio
// candidate / baseline with a stratified bootstrap percentile interval, judged against the
// campaign's tolerance. Ours (the study has no A/B design); the machinery is the primary
// analysis's (analysis/bootstrap.hpp).
//
// Pairs: a baseline case and a candidate case with the same vm, regime, repeat and
// configuration (spec_json variant.pair_id). Stratum = (vm, regime, configuration); strata
// weigh equally. Estimator: ratio of stratified means, R = M_c / M_b, where M_v is the mean
// over strata of the stratum mean of variant v's values (a ratio of means, not a mean of
// log ratios: counters such as refaults or swap-out may be 0 in a case). Each bootstrap
// replicate resamples the pairs within every stratum (same indices for both members) and
// recomputes R; the interval is the type-7 percentile interval of the replicates at level
// 1 - alpha / m, m = number of metrics that have a tolerance (Bonferroni, like the study's
// 0.05 / 4). A pair enters a metric only when both members are completed, usable cases
// with the metric measured; a lost or infra_failed case is caught by the absolute
// assertions (all_cases_completed), not here.
#include "harness/campaign/campaign.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// One metric of the comparison (fixed set and order; names are the campaign file's
/// regression.tolerances keys).
struct RegressionMetric {
  const char* name;   ///< e.g. "reclaim_duration"
  const char* unit;   ///< "s", "ratio", "count", "KiB", "ms"
  const char* what;   ///< one line for reports
};

/// reclaim_duration (s, bounded-reclaim cases: the memory.reclaim write), achieved_ratio
/// (achieved / requested, bounded-reclaim), trigger_delay (s since pressure start: trigger,
/// or would_trigger for static-zram), bg_psi_some and bg_psi_full (s of bg memory.pressure
/// stall in the pressure phase), swapout (KiB, pswpout in the pressure phase), refaults
/// (count, bg+fg workingset_refault in the pressure phase), compute_p99 and sqlite_p99 (ms,
/// pressure-phase p99 response time, type 7), restoration_time (s, restoration end - start).
const std::vector<RegressionMetric>& regression_metrics();

/// Per metric: the comparison and its verdict.
struct MetricComparison {
  std::string metric, unit;
  int pairs = 0;                     ///< pairs with the metric on both members
  int strata = 0;                    ///< strata those pairs fall in
  std::optional<double> baseline_mean, candidate_mean;  ///< stratified means, in `unit`
  std::optional<double> ratio;       ///< candidate / baseline (nullopt: no pairs, or baseline mean 0)
  std::optional<double> lower, upper;///< percentile interval of the ratio at `level`
  double level = 0;                  ///< e.g. 1 - 0.05 / 10 = 0.995
  std::optional<double> max_ratio, min_ratio;  ///< the tolerance (none: reported only)
  /// "regression" (interval wholly beyond the tolerance), "inconclusive" (the ratio is past
  /// the tolerance but the interval is not wholly beyond it: more pairs would decide), "ok"
  /// (neither), "reported" (no tolerance), "no data" (no pair, or the ratio is undefined).
  /// Only "regression" fails a check (metric_verdict).
  std::string verdict;
  /// What the interval shows, whatever the tolerance: "higher" (lower bound > 1), "lower"
  /// (upper bound < 1), "none shown" (the interval contains 1); "" with no data (change_of).
  std::string change;
  std::string detail;                ///< one line with the numbers, e.g. "ratio 1.31 [1.22, 1.40] > 1.2 allowed"
};

/// The tolerance rule (ours): regression iff lower > max_ratio or upper < min_ratio.
/// Pure; exposed for the unit tests.
bool is_regression(double lower, double upper, std::optional<double> max_ratio, std::optional<double> min_ratio);

/// The verdict of a metric with at least one tolerance (ours): "regression" when
/// is_regression(), else "inconclusive" when the point `ratio` is > max_ratio or < min_ratio,
/// else "ok". Pure; exposed for the unit tests.
std::string metric_verdict(double ratio, double lower, double upper, std::optional<double> max_ratio,
                           std::optional<double> min_ratio);

/// MetricComparison::change of an interval: "higher" iff lower > 1, "lower" iff upper < 1,
/// else "none shown". Pure.
std::string change_of(double lower, double upper);

/// Compares the candidate cases of `candidate_db` with the baseline cases of `baseline_db`
/// (the same file for a one-DB A/B run; a stored baseline otherwise). Tolerances, alpha and
/// the bootstrap seed/replicates come from `c` (seed = c.seed, B = c.bootstrap_replicates).
/// Errors: results::DbError when a DB cannot be read; std::runtime_error when `c` is not an
/// ab-pairs campaign.
std::vector<MetricComparison> compare_variants(const std::string& baseline_db, const std::string& candidate_db,
                                               const harness::campaign::Campaign& c);

}  // namespace analysis
