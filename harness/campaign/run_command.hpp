#pragma once
// `harness run`'s policy once its options are parsed (ours; docs/CAMPAIGN.md, README.md "Exit
// codes"): the campaign it runs, the refusals before anything is submitted, what it prints,
// and its exit code. run_and_print() is also each run of `harness check` (check_command.hpp).
#include "harness/campaign/campaign.hpp"
#include "harness/campaign/command_env.hpp"
#include "harness/campaign/runner.hpp"

#include <optional>
#include <string>

namespace harness::campaign {

/// Runs `c` with `o` (run_campaign) and prints on env.out the fleet qualification table and
/// the run's summary (counts, unreachable and unusable guests). A refused preflight or a
/// capacity refusal is printed as "harness: <why>" on env.err and gives nullopt: no case was
/// submitted (exit code kError). Other exceptions of run_campaign propagate.
std::optional<RunSummary> run_and_print(const Campaign& c, RunOptions o, const CommandEnv& env);

/// `harness run [FILE] DB`: `file` ("" = the plan stored in `db_path`, run_campaign_of) run into
/// `db_path` with `o`'s hosts, accelerator, progress and host wait (o.db_path is set here).
/// Returns the exit code (harness/cli/exit_codes.hpp): kOk when every planned case completed
/// or was lost; kError when the same-kernel rule refuses the campaign, the preflight or the
/// capacity is refused, or cases are left infra_failed or pending (said on env.err with the
/// `harness status` command to see them). The caller has checked `db_path` with
/// env.check_target when `file` is given. Throws as run_campaign_of and run_campaign.
int run_command(const std::string& file, const std::string& db_path, RunOptions o, const CommandEnv& env);

}  // namespace harness::campaign
