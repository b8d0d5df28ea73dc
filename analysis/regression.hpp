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
// 0.05 / 4). `harness check --until-decided` splits alpha over its K looks too
// (1 - alpha / (m K)) and uses the delta-method t interval instead (analysis/sequential.hpp).
// A pair enters a metric only when both members are completed, usable cases with the metric
// measured; a lost or infra_failed case is caught by the absolute assertions
// (all_cases_completed), not here.
#include "harness/campaign/campaign.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace analysis {

struct BootstrapOptions;  // analysis/bootstrap.hpp

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
  /// Under VerdictRule::decide (`harness check --until-decided`): "regression", "ok-decided"
  /// (interval wholly within the tolerance) or "inconclusive" (neither), sequential_verdict.
  /// "regression" fails a check; "inconclusive" makes it inconclusive (exit code 5).
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

/// The sequential rule (ours; docs/CI.md "Deciding with more pairs"; its interval is the
/// delta-method t interval, analysis/ratio_interval.hpp): "regression" when
/// is_regression(), "ok-decided" when the interval lies wholly within the tolerance band
/// (upper <= max_ratio and lower >= min_ratio, each when given), else "inconclusive". Pure.
std::string sequential_verdict(double lower, double upper, std::optional<double> max_ratio,
                               std::optional<double> min_ratio);

/// Which verdicts compare_pairs gives a metric with a tolerance: `fixed` (metric_verdict: ok /
/// inconclusive / regression, a plain `harness check`) or `decide` (sequential_verdict).
enum class VerdictRule { fixed, decide };

/// How compare_variants judges: the verdict rule and the number of looks K the family-wise
/// alpha is split over (1 = a plain check; `check --until-decided`: the looks of its
/// schedule, analysis/sequential.hpp).
struct ComparisonRule {
  VerdictRule verdicts = VerdictRule::fixed;
  int looks = 1;
};

/// The per-metric interval level: 1 - alpha / (m * looks), m = toleranced metrics (at least
/// 1). Bonferroni over metrics (as the study's 0.05 / 4) and over looks (a union bound: valid
/// whatever rule decides when to stop; docs/CI.md). std::invalid_argument when looks < 1.
double comparison_level(double alpha, int toleranced_metrics, int looks = 1);

/// The pairs of one metric: (baseline, candidate) values in the metric's unit, each with its
/// stratum "vm/regime/configuration" and the pair's repeat number (design.repeats index).
struct MetricPairs {
  std::vector<std::array<double, 2>> rows;
  std::vector<std::string> stratum;
  std::vector<std::int64_t> repeat;
};

/// Every metric of regression_metrics() -> its pairs (pairs in pair_id order), read from the
/// baseline cases of `baseline_db` and the candidate cases of `candidate_db` (may be the same
/// path). A pair enters a metric as in compare_variants. Errors: results::DbError.
std::map<std::string, MetricPairs> paired_values(const std::string& baseline_db, const std::string& candidate_db);

/// One metric compared from its pairs: stratified means, ratio, and at `level` either
/// (VerdictRule::fixed) the stratified pair bootstrap (`bo`) percentile interval and
/// metric_verdict, or (VerdictRule::decide) the delta-method t interval
/// (analysis/ratio_interval.hpp; `bo` unused) and sequential_verdict; "inconclusive" when no
/// stratum holds two pairs yet. No tolerance: "reported". Pure apart from the bootstrap's
/// threads. std::invalid_argument when rows and stratum labels differ in number.
MetricComparison compare_pairs(const RegressionMetric& m, const MetricPairs& p, std::optional<double> max_ratio,
                               std::optional<double> min_ratio, double level, const BootstrapOptions& bo,
                               VerdictRule rule = VerdictRule::fixed);

/// Compares the candidate cases of `candidate_db` with the baseline cases of `baseline_db`
/// (the same file for a one-DB A/B run; a stored baseline otherwise). Tolerances, alpha and
/// the bootstrap seed/replicates come from `c` (seed = c.seed, B = c.bootstrap_replicates);
/// the level is comparison_level(alpha, m, rule.looks), the verdicts rule.verdicts'.
/// Errors: results::DbError when a DB cannot be read; std::runtime_error when `c` is not an
/// ab-pairs campaign; std::invalid_argument when rule.looks < 1.
std::vector<MetricComparison> compare_variants(const std::string& baseline_db, const std::string& candidate_db,
                                               const harness::campaign::Campaign& c, const ComparisonRule& rule = {});

}  // namespace analysis
