#pragma once
// What an A/B design can detect before it runs (`harness plan FILE --variance-from DB`; ours,
// docs/CI.md "What a design can detect").
//
// Spread: from the pairs of a stored A/A (or A/B) campaign DB, per metric, sigma of
// analysis/stats/ratio_interval.hpp pair_spread (the pooled within-stratum SD of the linearised log
// ratio u), so at the planned n_s pairs in each of S strata SE(log R) = sigma *
// sqrt(sum_s 1 / n_s) / S, the SE the sequential check's interval uses.
// Smallest detectable ratio (the usual minimum detectable effect, Bloom, "Minimum Detectable
// Effects", Evaluation Review 19(5), 1995): exp((t_{df, 1-(1-level)/2} + t_{df, power}) * SE)
// above 1 (exp(-...) below 1), df = sum_s (n_s - 1) at the planned pairs: the ratio whose
// delta-method t interval at `level` lies wholly beyond 1 with probability about `power`.
// Beyond a tolerance: max_ratio * exp(...) and min_ratio * exp(-...). With one planned pair
// per stratum (df 0) there is no interval: nothing is detectable. The plain check's percentile
// bootstrap interval is narrower than this t interval with few pairs (and undercovers), so the
// figures are those of the sequential check and conservative for the plain one.
#include "analysis/stats/paired_ratio.hpp"
#include "analysis/stats/ratio_interval.hpp"

#include <optional>
#include <map>
#include <string>
#include <vector>

namespace analysis {

/// Power of the smallest detectable ratio (ours, the common convention of Bloom 1995).
inline constexpr double kDetectablePower = 0.8;

/// One metric's sensitivity at a planned design.
struct DetectableChange {
  std::string metric;
  std::optional<double> max_ratio, min_ratio;  ///< the campaign's tolerance
  int variance_pairs = 0;          ///< pairs of the variance DB that gave sigma
  std::optional<double> sigma;     ///< per-pair SD of u (see above); nullopt = cannot know
  std::optional<double> se_log;    ///< SE of log R at the planned pairs
  int df = 0;                      ///< degrees of freedom at the planned pairs (sum of n_s - 1)
  std::optional<double> up_from_one, down_from_one;  ///< smallest ratio > 1 / largest < 1 detected as a change
  std::optional<double> above_tolerance;  ///< smallest ratio flagged beyond max_ratio (when given)
  std::optional<double> below_tolerance;  ///< largest ratio flagged beyond min_ratio (when given)
  /// The design cannot detect a change as large as its tolerance: up_from_one > max_ratio or
  /// down_from_one < min_ratio.
  bool insensitive = false;
  std::string why_unknown;         ///< when sigma is nullopt: why
  int planned_pairs = 0;           ///< planned pairs that measure this metric (its strata's)
  int planned_strata = 0;          ///< planned strata (vm/regime/configuration) that measure it
};

/// The smallest detectable ratios of every metric of `metrics` (in that order) with a tolerance
/// in `tolerances`, with the spread of its pairs in `pairs` (metric name -> the pairs of a
/// variance DB: data/ab_pairs.hpp paired_values of its baseline and candidate cases; `source`
/// names that DB in why_unknown), at `level` and the planned pairs per stratum `planned`
/// ("vm/regime/configuration" -> pairs, each >= 1). A metric counts only the planned strata of
/// the configurations whose pairs measure it (reclaim_duration: the arms that write
/// memory.reclaim), as the check judges it; every planned stratum when its pairs measure it in
/// none. Pure. Errors: std::invalid_argument when `planned` is empty or holds a value < 1, level
/// not in (0, 1), or `pairs` lacks a toleranced metric.
std::vector<DetectableChange> detectable_changes(const std::vector<RegressionMetric>& metrics,
                                                 const std::map<std::string, MetricPairs>& pairs,
                                                 const std::string& source, const std::vector<MetricTolerance>& tolerances,
                                                 const std::map<std::string, int>& planned, double level,
                                                 double power = kDetectablePower);

/// How many pairs a tolerance needs (ours, issue 59): the fewest pairs per stratum R (an
/// ab-pairs design plans design.repeats pairs in every stratum) at which `strata` strata of R
/// pairs detect a change as large as the tolerance, i.e. detectable_change is not
/// `insensitive` (the refusal's criterion: up_from_one <= max_ratio and down_from_one >=
/// min_ratio).
struct RepeatsNeeded {
  enum class Outcome {
    found,       ///< `repeats` is that R
    beyond_cap,  ///< not even `repeats` (the search's cap) does
    unknown,     ///< no sigma, no tolerance, or no stratum: nothing to search
  };
  Outcome outcome = Outcome::unknown;
  int repeats = 0;  ///< R (found), or the cap (beyond_cap)
};

/// The search of RepeatsNeeded for one metric's tolerance and `sigma` over `strata` strata, at
/// `level` and `power`, R in 1..max_repeats (the smallest detectable ratio falls as R grows, so
/// the first R that detects is found by bisection). Pure.
RepeatsNeeded repeats_needed(std::optional<double> max_ratio, std::optional<double> min_ratio,
                             std::optional<double> sigma, int strata, double level, double power = kDetectablePower,
                             int max_repeats = 100000);

/// The same from a known sigma (nullopt: cannot know, `why` says why). Pure.
DetectableChange detectable_change(const std::string& metric, std::optional<double> max_ratio,
                                   std::optional<double> min_ratio, std::optional<double> sigma,
                                   const std::vector<int>& planned, double level, double power = kDetectablePower,
                                   const std::string& why = "");

}  // namespace analysis
