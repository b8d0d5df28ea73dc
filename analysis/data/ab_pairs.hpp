#pragma once
// The pairs of an A/B campaign read from its DB (ours; design ab-pairs): a baseline case and a
// candidate case with the same vm, regime, repeat and configuration (spec_json variant.pair_id),
// each metric's value per case, and the fixed list of metrics the comparison reads.
// A pair enters a metric only when both members are completed, usable cases with the metric
// measured.
#include "analysis/stats/metric_pairs.hpp"

#include <map>
#include <string>
#include <vector>

namespace analysis {

/// reclaim_duration (s, bounded-reclaim cases: the memory.reclaim write), achieved_ratio
/// (achieved / requested, bounded-reclaim), trigger_delay (s since pressure start: trigger,
/// or would_trigger for static-zram), bg_psi_some and bg_psi_full (s of bg memory.pressure
/// stall in the pressure phase), swapout (KiB, pswpout in the pressure phase), refaults
/// (count, bg+fg workingset_refault in the pressure phase), compute_p99 and sqlite_p99 (ms,
/// pressure-phase p99 response time, type 7), restoration_time (s, restoration end - start).
const std::vector<RegressionMetric>& regression_metrics();

/// Every metric of regression_metrics() -> its pairs (pairs in pair_id order), read from the
/// baseline cases of `baseline_db` and the candidate cases of `candidate_db` (may be the same
/// path). A pair enters a metric as in compare_variants. Errors: results::DbError.
std::map<std::string, MetricPairs> paired_values(const std::string& baseline_db, const std::string& candidate_db);

}  // namespace analysis
