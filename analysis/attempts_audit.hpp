#pragma once
// The attempts audit trail of a campaign DB (results/schema.sql `attempts`): every attempt of every
// case, including retried infra failures, lost cases and operator reclassifications
// (`harness mark-infra`, kind = mark-infra, detail_json {reason, previous_status, operator}).
#include "results/db.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace analysis {

/// One row of `attempts`, with the case's configuration (from cases, else schedule; "?" if neither).
struct AttemptRow {
  std::string case_id, configuration, status, kind, error;
  std::int64_t attempt = 1;
  std::string reason;  ///< mark-infra: detail_json.reason (empty when absent)
};

/// All attempts ordered by case and attempt. A DB without the table gives an empty list; a DB
/// without the v2 columns (kind, detail_json) reads every row as kind "run".
std::vector<AttemptRow> load_attempts(results::Db& db);

}  // namespace analysis
