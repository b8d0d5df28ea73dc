#pragma once
// A paired ratio against a tolerance (ours; the A/B design: the campaign's regression.tolerances,
// docs/CI.md): per metric, the ratio candidate / baseline of stratified means with its interval,
// and the verdicts of the plain check and of the sequential one. Pure: the pairs come from
// data/ab_pairs.hpp, the campaign's design from compare/regression.hpp.
#include "analysis/stats/metric_pairs.hpp"

#include <optional>
#include <string>
#include <vector>

namespace analysis {

struct BootstrapOptions;  // analysis/stats/bootstrap.hpp

/// The tolerance of one metric (a campaign's regression.tolerances.<metric>), on the ratio
/// candidate / baseline. A metric regresses when its whole interval lies beyond it: lower
/// bound > max_ratio, or upper bound < min_ratio (ours).
struct MetricTolerance {
  std::string metric;                 ///< a regression metric's name (data/ab_pairs.hpp regression_metrics)
  std::optional<double> max_ratio;    ///< > 0
  std::optional<double> min_ratio;    ///< > 0, < max_ratio when both are given
  int line = 0;                       ///< line in the campaign file (0 = not from a file)
};

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
/// delta-method t interval, analysis/stats/ratio_interval.hpp): "regression" when
/// is_regression(), "ok-decided" when the interval lies wholly within the tolerance band
/// (upper <= max_ratio and lower >= min_ratio, each when given), else "inconclusive". Pure.
std::string sequential_verdict(double lower, double upper, std::optional<double> max_ratio,
                               std::optional<double> min_ratio);

/// Which verdicts compare_pairs gives a metric with a tolerance: `fixed` (metric_verdict: ok /
/// inconclusive / regression, a plain `harness check`) or `decide` (sequential_verdict).
enum class VerdictRule { fixed, decide };

/// How compare_variants judges: the verdict rule and the number of looks K the family-wise
/// alpha is split over (1 = a plain check; `check --until-decided`: the looks of its
/// schedule, analysis/stats/sequential.hpp).
struct ComparisonRule {
  VerdictRule verdicts = VerdictRule::fixed;
  int looks = 1;
};

/// The per-metric interval level: 1 - alpha / (m * looks), m = toleranced metrics (at least
/// 1). Bonferroni over metrics (as the study's 0.05 / 4) and over looks (a union bound: valid
/// whatever rule decides when to stop; docs/CI.md). std::invalid_argument when looks < 1.
double comparison_level(double alpha, int toleranced_metrics, int looks = 1);

/// One metric compared from its pairs: stratified means, ratio, and at `level` either
/// (VerdictRule::fixed) the stratified pair bootstrap (`bo`) percentile interval and
/// metric_verdict, or (VerdictRule::decide) the delta-method t interval
/// (analysis/stats/ratio_interval.hpp; `bo` unused) and sequential_verdict; "inconclusive" when no
/// stratum holds two pairs yet. No tolerance: "reported". Pure apart from the bootstrap's
/// threads. std::invalid_argument when rows and stratum labels differ in number.
MetricComparison compare_pairs(const RegressionMetric& m, const MetricPairs& p, std::optional<double> max_ratio,
                               std::optional<double> min_ratio, double level, const BootstrapOptions& bo,
                               VerdictRule rule = VerdictRule::fixed);

}  // namespace analysis
