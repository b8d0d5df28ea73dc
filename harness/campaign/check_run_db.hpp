#pragma once
// The DB a `harness check` run writes (ours; docs/CI.md): CI never passes on stale data, so a
// check writes a new DB per invocation unless one is named, and a named DB that already holds a
// run is refused unless --reuse.
#include "harness/campaign/command_env.hpp"

#include <optional>
#include <string>

namespace harness::campaign {

/// A new DB path for one check of campaign `campaign`: ./<campaign>-<UTC YYYYmmddTHHMMSSZ>.db,
/// with -2, -3, ... before ".db" when that file exists.
std::string fresh_check_db(const std::string& campaign);

/// The DB a check of campaign `campaign` writes: `named`, else fresh_check_db(campaign). A DB
/// that already holds attempts or cases is refused unless `reuse`: the refusal is one
/// "harness check: PATH already holds an earlier run ..." line on env.err and gives nullopt
/// (exit code kError). Prints "check database: PATH (new run)" or, reused, what is judged again
/// on env.out. Throws env.check_target's error when `named` is not a campaign DB.
std::optional<std::string> check_run_db(const std::string& campaign, const std::string& named, bool reuse,
                                        const CommandEnv& env);

}  // namespace harness::campaign
