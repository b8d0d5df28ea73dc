#pragma once
// Report tables that state every case's outcome and how well the protocol was kept
// (docs/PROTOCOL.md "Every case keeps its outcome"; study: reclaim execution is a secondary
// measurement): outcome counts, the attempts audit, reclaim execution, load and measurement
// quality, and the warnings they raise. Absent columns / keys print "not measured".
#include "analysis/data/campaign_data.hpp"
#include "analysis/tables/table.hpp"
#include "analysis/data/triplets.hpp"

#include <string>
#include <vector>

namespace analysis {

/// Steal above this fraction of the case time (warmup start .. recovery end) flags a case
/// (PROTOCOL.md assumption: 1%).
inline constexpr double kStealFlagFraction = 0.01;
/// Achieved allocation rate more than this fraction below nominal flags a case (10%).
inline constexpr double kRateShortfallFlag = 0.10;

/// Per arm (ts.arms, report order), over the campaign's cases (triplet_id set): censored requests per canary,
/// cases with a truncated trace, OOM kills bg / fg (outcome_json.oom_kills), lost cases, imputed
/// p99 values, flagged (censored) p99 lower bounds, incomplete triplets (a member never ran).
Table outcome_counts_table(const CampaignData& data, const TripletSet& ts);

/// Per arm (data.arms, report order), from `attempts`: attempts, infra failures, lost, reruns (run/adopted attempts
/// after a case's first), operator actions (mark-infra, reset-infra; not counted as attempts).
Table attempts_table(const CampaignData& data);

/// Every mark-infra reclassification with its reason (detail_json.reason).
Table reclassifications_table(const CampaignData& data);

/// Study secondary table "reclaim execution", per configuration: trigger delay since pressure start
/// (s), write duration (ms), errno counts, requested, achieved across the write, concurrent estimate,
/// conservative achieved (MiB), over-reclaim ratio achieved/requested (unclipped).
Table reclaim_execution_table(const std::vector<const CaseSummary*>& cases, const std::vector<std::string>& arms);

/// Per arm (`arms`, report order; TripletSet::arms): achieved vs nominal allocation rate (MiB/s), cases > 10% below nominal,
/// pressure-episode fraction, irregular controller windows, steal, harness self cpu (s) / RSS (KiB).
Table measurement_quality_table(const std::vector<const CaseSummary*>& cases, const std::vector<std::string>& arms);

/// Warnings naming cases whose achieved allocation rate is > 10% below nominal or whose steal is
/// above kStealFlagFraction of the case time.
std::vector<std::string> measurement_warnings(const std::vector<const CaseSummary*>& cases);

}  // namespace analysis
