#pragma once
// The verdict in the report: its lines at the top of the summary (the prespecified verdict, or one
// per treatment; the level of the study's four in a larger family; the estimates) and
// report.json extra.verdict.
#include "analysis/report/report_table.hpp"
#include "analysis/tables/primary.hpp"

#include <map>
#include <string>

namespace analysis {

/// Puts the verdict first in r.summary: the prespecified one of a family of one treatment, or for
/// several treatments one verdict line per treatment (never one over the family; `acted` appends to
/// a treatment's line that it did not act in some cases, treatment_actions.hpp); then the level of
/// the study's four in a larger family; appends the estimates line last.
void verdict_summary(const PrimaryResult& pr, const std::map<std::string, std::string>& acted, Report& r);

/// extra.verdict: the prespecified verdict of a family of one treatment, or (per_treatment) the
/// per-treatment ones in by_treatment, general_benefit then null (no verdict over the family).
nlohmann::json verdict_json(const PrimaryResult& pr);

}  // namespace analysis
