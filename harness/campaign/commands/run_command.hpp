#pragma once
// `harness run`'s policy once its options are parsed (ours; docs/CAMPAIGN.md, docs/OUTPUTS.md "Exit
// codes"): the campaign it runs, the refusals before anything is submitted, what it prints,
// and its outcome. The run itself is command_campaign.hpp run_and_print, also each look of
// `harness check`.
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/commands/command_env.hpp"
#include "harness/campaign/runner/runner.hpp"

#include <string>

namespace harness::campaign {

/// `harness run [FILE] DB`: `file` ("" = the plan stored in `db_path`, run_campaign_of) run into
/// `db_path` with `o`'s hosts, accelerator, progress and host wait (o.db_path is set here).
/// Returns CommandOutcome::ok when every planned case completed or was lost; could_not_run
/// when the same-kernel rule refuses the campaign, the preflight or the capacity is refused
/// (run_and_print), or cases are left infra_failed or pending (said on env.err with the
/// `harness status` command to see them). The caller has checked `db_path` with
/// env.check_target when `file` is given. Throws as run_campaign_of and run_campaign.
CommandOutcome run_command(const std::string& file, const std::string& db_path, RunOptions o, const CommandEnv& env);

}  // namespace harness::campaign
