#pragma once
// The operator's audited actions on a campaign DB (docs/PROTOCOL.md): `harness mark-infra`
// reclassifies a case as infra_failed, `harness reset-infra` restarts infra_failed cases' retry
// budget. Each writes an attempts row that says who, why and what was there before.
#include "results/db.hpp"

#include <string>
#include <vector>

namespace harness::campaign {

/// `harness mark-infra` (PROTOCOL.md: an operator may reclassify a case; audited):
/// reclassifies case `case_id` as infra_failed so that the next `harness run` reruns it, in
/// one transaction: attempts row kind 'mark-infra', status 'marked_infra', detail_json
/// `{reason, previous_status, operator, previous_case: {status, error, attempt, outcome_json},
/// override_outcome, original_outcome}`; the cases row is kept (status infra_failed, `error`
/// "mark-infra: REASON") until the rerun replaces it; schedule.state infra_failed. Returns
/// the previous status. A completed or lost case is an outcome (study: "Every case retained
/// its original outcome"): it is reclassified only with `override_outcome`, and then
/// original_outcome keeps what the analysis used (analysis/data/overrides.hpp: its p99s, or
/// "lost"), for the report's warning and Table 4's sensitivity row. An infra_failed case
/// needs no flag (its retry budget restarts). Throws std::invalid_argument for an unknown
/// case, an empty `reason`, a pending case, or a completed or lost case without
/// `override_outcome` (the message names the flag).
std::string mark_infra(results::Db& db, const std::string& case_id, const std::string& reason,
                       const std::string& operator_name, bool override_outcome = false);

/// `harness reset-infra` (PROTOCOL.md: audited operator action): makes infra_failed cases
/// runnable again by restarting their retry budget (max_infra_retries counts run attempts
/// after the latest mark-infra or reset-infra row). `case_id` empty = every case whose
/// schedule.state is infra_failed. One transaction: per case an attempts row kind
/// 'reset-infra', status 'reset_infra', host 'operator', detail_json `{reason, operator,
/// previous_runs}` (previous_runs: run attempts since the previous mark/reset). The plan (campaign_meta,
/// schedule) is not touched, so its SHA-256 stays the same. Returns the case ids reset.
/// Throws std::invalid_argument for an empty reason, an unknown case or a case that is not
/// infra_failed (naming its state).
std::vector<std::string> reset_infra(results::Db& db, const std::string& case_id, const std::string& reason,
                                     const std::string& operator_name);

}  // namespace harness::campaign
