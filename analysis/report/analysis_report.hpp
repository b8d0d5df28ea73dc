#pragma once
// `harness analyze`: builds the confirmatory report (Tables 1, 2, 4, 5, 6, the mechanism table with
// the study's medians, absolute p95/p99 differences, the design/coverage table, reclaim execution,
// outcome counts, attempts, mark-infra reasons, load and measurement quality) and the verdict. Table numbering and
// content follow the study; rules follow docs/PROTOCOL.md and analysis/README.md. This file puts
// the parts in order; each part is a file of its own (analysis/README.md): the tables in tables/
// (table1_settings, table2_regimes, table4_primary, sensitivity, case_medians, outcome_tables, ...),
// title, warnings, design/coverage, verdict and report.json's extra in report/.
#include "analysis/data/campaign_data.hpp"
#include "analysis/tables/primary.hpp"
#include "analysis/report/report_table.hpp"
#include "analysis/report/report_title.hpp"
#include "analysis/report/report_warnings.hpp"
#include "analysis/data/triplets.hpp"

#include <string>

namespace analysis {

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
