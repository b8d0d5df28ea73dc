#pragma once
// The attempts audit trail of a campaign DB (results/schema.sql `attempts`): every attempt of every
// case, including retried infra failures, lost cases and operator reclassifications
// (`harness mark-infra`, kind = mark-infra, detail_json {reason, previous_status, operator}).
#include "results/db.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace analysis {

/// One row of `attempts`, with the case's configuration (from cases, else schedule; "?" if neither).
struct AttemptRow {
  std::string case_id, configuration, status, kind, error;
  std::int64_t attempt = 1;
  std::string reason;  ///< mark-infra: detail_json.reason (empty when absent)
  nlohmann::json detail;  ///< detail_json parsed (null when absent or invalid)
};

/// How attempts are counted: one rule for `harness status` and the report's attempts table
/// (ours; docs/PROTOCOL.md). An attempt is a finished run of the case: an attempts row of kind
/// `run` or `adopted` whose status is not `running`. Rows still in flight (status `running`),
/// runs interrupted before the case reached an agent (kind `interrupted`: the runner stopped,
/// nothing ran) and operator actions (kind `mark-infra`, `reset-infra`) are counted apart.
struct AttemptCounts {
  int attempts = 0;                        ///< finished runs (kind run | adopted)
  int completed = 0, infra_failed = 0, lost = 0;  ///< of those, by status
  int reruns = 0;                          ///< attempts of a case after its first attempt
  int in_flight = 0;                       ///< status running
  int interrupted = 0;                     ///< kind interrupted
  int operator_actions = 0;                ///< kind mark-infra | reset-infra
};

/// True for an operator action row (kind mark-infra or reset-infra).
bool is_operator_action(const AttemptRow& a);

/// Counts `rows` (ordered by case and attempt, as load_attempts returns them): all of them, or
/// only those whose configuration is `configuration` when it is not empty.
AttemptCounts count_attempts(const std::vector<AttemptRow>& rows, const std::string& configuration = "");

/// All attempts ordered by case and attempt. A DB without the table gives an empty list; a DB
/// without the v2 columns (kind, detail_json) reads every row as kind "run".
std::vector<AttemptRow> load_attempts(results::Db& db);

}  // namespace analysis
