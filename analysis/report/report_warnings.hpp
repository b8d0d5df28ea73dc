#pragma once
// The report's warnings about what ran and what is recorded: TCG, overcommit, a pipeline-test
// dose, infra_failed and missing cases, the loader's and the blocks' own, lost cases, measurement
// quality; and the counts of TCG and lost cases report.json carries.
#include "analysis/data/campaign_data.hpp"
#include "analysis/data/triplets.hpp"
#include "analysis/report/report_table.hpp"

#include <map>
#include <string>

namespace analysis {

/// The report's warning for a plan whose from_pilot dose was declared a pipeline test
/// (`harness plan --pipeline-test-dose`: schedule JSON dose_from_pilot.pipeline_test, in
/// campaign_meta.schedule_json), naming the dose (MiB) and the pilot's accelerators; "" otherwise.
std::string pipeline_test_dose_warning(const std::map<std::string, std::string>& meta);

/// Cases that ran under TCG.
int tcg_case_count(const CampaignData& data);

/// Lost cases (lost after the pressure phase started).
int lost_case_count(const CampaignData& data);

/// Appends to r.warnings the warnings about what ran and what is recorded, in the report's order:
/// TCG, overcommit, a pipeline-test dose, infra_failed and missing cases, the loader's and the
/// triplets' own, lost cases, measurement quality.
void record_warnings(const CampaignData& data, const TripletSet& ts, Report& r);

}  // namespace analysis
