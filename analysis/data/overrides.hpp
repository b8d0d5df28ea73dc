#pragma once
// Outcomes an operator overrode (`harness mark-infra --override-outcome` on a completed or
// lost case; docs/PROTOCOL.md "Case status"): the record of the original outcome kept in the
// audit row when it happens, the list the report warns about, and the campaign with the
// original outcomes reinstated for Table 4's sensitivity row. The study: "Every case retained
// its original outcome", so an override is never silent.
#include "analysis/data/campaign_data.hpp"
#include "results/db.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace analysis {

/// The original outcome of case `case_id` as the analysis would use it, for the mark-infra audit
/// row (attempts.detail_json.original_outcome): {"status": "completed", "usable": bool,
/// "excluded_because": text, "canaries": {"compute" | "sqlite": {"p50_us", "p95_us", "p99_us",
/// "requests", "censored"}}} for a completed case, {"status": "lost", "case": {...}} for a lost one (its p99 is
/// imputed at analysis time, docs/PROTOCOL.md), null for any other status or no such case.
/// Errors: results::DbError.
nlohmann::json original_outcome_record(results::Db& db, const std::string& case_id);

/// One overridden case: the first mark-infra row of the case whose previous status was
/// completed or lost.
struct OverriddenCase {
  std::string case_id, configuration, original_status, operator_name, reason;
  std::int64_t attempt = 0;        ///< the mark-infra row's attempt number
  nlohmann::json original;         ///< detail_json.original_outcome (null: not recorded by this DB's harness)
  std::string status_now;          ///< the case's status in `cases` now ("" = no record)
  /// "compute 12.345 ms, sqlite 23.456 ms" from the record ("not recorded" when absent).
  std::string original_p99_text() const;
};

/// The overridden cases of `data` (attempts audit), ordered by case id.
std::vector<OverriddenCase> overridden_cases(const CampaignData& data);

/// A copy of `data` in which every overridden case has its original outcome again: a completed
/// original enters with its recorded p50/p95/p99 (no trace, mechanism or wake/service: those
/// were replaced by the rerun), a lost original as lost (imputed again, impute_lost). A case
/// whose original p99s were not recorded keeps its current outcome; `notes` says so per case.
CampaignData with_original_outcomes(const CampaignData& data, const std::vector<OverriddenCase>& overridden,
                                    std::vector<std::string>& notes);

}  // namespace analysis
