#pragma once
// The sequential A/B check (`harness check --until-decided --max-pairs N`; ours, docs/CI.md
// "Deciding with more pairs"): pairs are added in looks until every metric with a tolerance
// is decided, or the cap is reached.
//
// Validity under optional stopping: the looks are fixed before the run (look_schedule: the
// campaign's design.repeats per look, up to the cap), and every interval is taken at
// 1 - alpha / (m * K) (analysis::comparison_level), m = metrics with a tolerance, K = looks.
// By the union bound (Bonferroni) the chance that any interval of any metric at any look
// misses its true ratio is at most alpha, whatever rule decides when to stop; this is the
// conservative Bonferroni bound of group-sequential testing (Jennison & Turnbull, "Group
// Sequential Methods with Applications to Clinical Trials", 2000, sec. 2.2 and 15.1). It
// holds as far as each interval holds its nominal level: the delta-method Student-t interval
// of ratio_interval.hpp (VerdictRule::decide), not the plain check's percentile bootstrap,
// which undercovers at these levels with few pairs; heavy-tailed metrics strain the t
// interval too (docs/CI.md).
#include "analysis/stats/paired_ratio.hpp"

#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// The looks of a sequential check: cumulative repeats per (vm, regime, configuration) at each
/// look, strictly increasing, the last the cap.
struct LookSchedule {
  std::vector<int> repeats;
  int looks() const { return static_cast<int>(repeats.size()); }
};

/// First look at `first` repeats, then every `first` more, the last at `cap` (e.g. 6, 30:
/// 6 12 18 24 30; 6, 15: 6 12 15). std::invalid_argument unless 1 <= first <= cap.
LookSchedule look_schedule(int first, int cap);

/// Whether a sequential check stops after a look: some metric is "regression" (the check
/// fails whatever the others say), or every metric with a tolerance is "ok-decided".
/// Metrics without a tolerance never hold it up; a toleranced metric with "no data" does.
bool sequential_stop(const std::vector<MetricComparison>& metrics);

/// Where one simulated sequential check of one metric stopped (bench and tests).
struct SequentialOutcome {
  int look = 0;         ///< 1-based look it stopped at (the last when undecided)
  int pairs = 0;        ///< pairs at that look
  std::string verdict;  ///< "regression", "ok-decided" or "inconclusive" (the cap reached)
  MetricComparison at_stop;
};

/// Runs the sequential rule on one metric: at each look the pairs whose repeat is <= the
/// look's repeats, compare_pairs at comparison_level(alpha, metrics, K) with
/// VerdictRule::decide, stopping at the first "regression" or "ok-decided". `p` must carry
/// the repeat of every row. std::invalid_argument when it does not, or the metric has no
/// tolerance.
SequentialOutcome run_sequential(const RegressionMetric& m, const MetricPairs& p, const LookSchedule& s,
                                 std::optional<double> max_ratio, std::optional<double> min_ratio, double alpha,
                                 int metrics, const BootstrapOptions& bo);

}  // namespace analysis
