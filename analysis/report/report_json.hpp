#pragma once
// report.json's `extra`, the machine-readable side of the report: the DB, estimates, verdict,
// design, sensitivity analyses, arms, family, overridden cases, coverage, incomplete blocks.
#include "analysis/data/campaign_data.hpp"
#include "analysis/data/overrides.hpp"
#include "analysis/data/triplets.hpp"
#include "analysis/tables/primary.hpp"
#include "analysis/tables/sensitivity.hpp"

#include <nlohmann/json.hpp>

#include <vector>

namespace analysis {

/// Report::extra of the analysis report (build_analysis_report adds treatment_actions and tradeoff).
nlohmann::json report_extra(const CampaignData& data, const TripletSet& ts, const PrimaryResult& pr,
                            const std::vector<Sensitivity>& sens, const std::vector<OverriddenCase>& overridden);

}  // namespace analysis
