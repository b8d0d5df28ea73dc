#pragma once
// `harness export DB [--out DIR]` once its options are parsed and the DB is open: where the
// tidy tables go and what is printed (harness/campaign/store/export.hpp export_csv writes them).
#include "harness/campaign/commands/command_env.hpp"

#include <string>

namespace harness::campaign {

/// The default --out of `harness export DB`: DB's path without its extension, plus "-csv"
/// (runs/a.db -> runs/a-csv).
std::string default_export_dir(const std::string& db_path);

/// Writes `db` (opened from `db_path`) as CSV files with provenance (this build, the command
/// line) into `out_dir` ("" = default_export_dir(db_path)), one written path per line on
/// env.out; returns CommandOutcome::ok. Throws as export_csv.
CommandOutcome export_command(results::Db& db, const std::string& db_path, const std::string& out_dir,
                              const CommandEnv& env);

}  // namespace harness::campaign
