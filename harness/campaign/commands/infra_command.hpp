#pragma once
// `harness mark-infra` and `harness reset-infra` once their options are parsed and the DB is
// open: the audited operator actions of docs/PROTOCOL.md (campaign_db.hpp mark_infra,
// reset_infra), who is recorded as the operator, what is printed, and the outcome.
#include "harness/campaign/commands/command_env.hpp"

#include <string>

namespace harness::campaign {

/// Who runs an operator action: $USER when set and not empty, else "uid N" (getuid()).
std::string operator_name();

/// `harness mark-infra DB CASE --reason R [--override-outcome]` on `db`: reclassifies the case
/// as infra_failed (mark_infra, audited under operator_name()), says "CASE: PREVIOUS ->
/// infra_failed ..." on env.out and returns CommandOutcome::ok; a refusal of mark_infra (unknown
/// or pending case, empty reason, an outcome without `override_outcome`) is "harness: <why>" on
/// env.err and could_not_run. Throws results::DbError on SQLite errors.
CommandOutcome mark_infra_command(results::Db& db, const std::string& case_id, const std::string& reason,
                                  bool override_outcome, const CommandEnv& env);

/// `harness reset-infra DB [--case ID] --reason R` on `db`: restarts the retry budget of the
/// case (`case_id`, "" = every infra_failed case; reset_infra under operator_name()), one line
/// per case and a count on env.out, ok; a refusal of reset_infra is "harness: <why>" on
/// env.err and could_not_run. Throws results::DbError on SQLite errors.
CommandOutcome reset_infra_command(results::Db& db, const std::string& case_id, const std::string& reason,
                                   const CommandEnv& env);

}  // namespace harness::campaign
