#pragma once
// `harness analyze`: builds the confirmatory report (Tables 1, 2, 4, 5, 6, the mechanism table with
// the study's medians, absolute p95/p99 differences, the design/coverage table, reclaim execution,
// outcome counts, attempts, mark-infra reasons, load and measurement quality) and the verdict. Table numbering and
// content follow the study; rules follow docs/PROTOCOL.md and analysis/README.md.
#include "analysis/campaign_data.hpp"
#include "analysis/primary.hpp"
#include "analysis/report_table.hpp"
#include "analysis/triplets.hpp"

#include <map>
#include <string>

namespace analysis {

/// The campaign's kind: campaign_meta.kind, else the stored campaign YAML's `kind`, else "pilot"
/// for a pilot design, else "" (not recorded).
std::string campaign_kind(const std::map<std::string, std::string>& meta);

/// The report's warning for a plan whose from_pilot dose was declared a pipeline test
/// (`harness plan --pipeline-test-dose`: schedule JSON dose_from_pilot.pipeline_test, in
/// campaign_meta.schedule_json), naming the dose and the pilot's accelerators; "" otherwise.
std::string pipeline_test_dose_warning(const std::map<std::string, std::string>& meta);

/// Report title following the campaign kind: smoke / ci / pilot / confirmatory / not recorded,
/// naming the campaign (campaign_meta.name, else the DB path).
std::string report_title(const CampaignData& data);

/// Builds the full report from loaded data, the triplets and the primary result.
/// Warnings on top: loading problems, censored requests, incomplete and excluded triplets, lost
/// cases, one-triplet strata, infra_failed and missing cases, TCG-accelerated cases (timings
/// inflated), a from_pilot dose declared a pipeline test, allocation-rate shortfall and steal
/// flags, the small-sample coverage diagnostic.
Report build_analysis_report(const CampaignData& data, const TripletSet& ts, const PrimaryResult& pr);

/// Convenience: load, build triplets, run the primary analysis, build the report.
/// Errors: results::DbError (DB), std::invalid_argument (no complete triplet: message lists why).
Report analyze_campaign(const std::string& db_path, const PrimaryOptions& opt);

}  // namespace analysis
