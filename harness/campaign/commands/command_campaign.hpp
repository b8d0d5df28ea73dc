#pragma once
// The campaign a command plans, runs or checks, the refusal every one of them makes before
// anything is stored or booted (ours; docs/CAMPAIGN.md "Top level": pinned_commit; docs/CI.md),
// and the run that `harness run` and each look of `harness check` make: the shared base of the
// commands, so that no command includes another.
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/commands/command_env.hpp"
#include "harness/campaign/runner/runner.hpp"

#include <optional>
#include <string>

namespace harness::campaign {

/// The campaign at `file` as `harness run` and `harness check` take it: load_campaign(), then
/// `pinned_commit: build` resolved to env.build's commit (refused from a dirty build:
/// resolve_build_pin). Throws as those two.
Campaign pinned_campaign(const std::string& file, const CommandEnv& env);

/// The campaign of `harness run`: FILE when given (pinned_campaign), else the YAML stored in
/// `db_path` at plan time (pinned the same way). A run plans again, so it takes from the plan
/// stored in `db_path` (when there is one) what `harness plan` or `harness check` added beside
/// the file: --pipeline-test-dose (schedule JSON dose_from_pilot.pipeline_test) and an
/// --until-decided cap (check_sequential.hpp stored_max_pairs). Throws std::runtime_error
/// naming `db_path` when FILE is "" and there is no such DB; env.open_db's error when it is not
/// a campaign DB.
Campaign run_campaign_of(const std::string& file, const std::string& db_path, const CommandEnv& env);

/// The same-kernel rule (ab_same_kernel.hpp) for `harness <command>` (plan, run, check) against
/// env.image_dir: true, with "harness <command>: <why>" on env.err, when `c` is refused
/// (CommandOutcome::could_not_run).
bool same_kernel_refused(const Campaign& c, const char* command, const CommandEnv& env);

/// Runs `c` with `o` (run_campaign) and prints on env.out the fleet qualification table and
/// the run's summary (counts, unreachable and unusable guests). A refused preflight or a
/// capacity refusal is printed as "harness: <why>" on env.err and gives nullopt: no case was
/// submitted (CommandOutcome::could_not_run). Other exceptions of run_campaign propagate.
std::optional<RunSummary> run_and_print(const Campaign& c, RunOptions o, const CommandEnv& env);

}  // namespace harness::campaign
