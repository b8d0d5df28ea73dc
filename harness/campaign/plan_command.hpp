#pragma once
// `harness plan`'s policy once its options are parsed and FILE is loaded (ours; docs/CAMPAIGN.md,
// docs/CI.md "Deciding with more pairs", README.md "Exit codes"): the refusals before anything
// is stored, the schedule and where it is stored, and what is printed about the design.
#include "harness/campaign/campaign.hpp"
#include "harness/campaign/command_env.hpp"

#include <string>

namespace harness::campaign {

/// The options of one `harness plan`, as parsed.
struct PlanRequest {
  std::string db;                   ///< DB or --db: store the plan there ("" = print it, store nothing)
  std::string out;                  ///< --out: also write the schedule JSON here ("" = no)
  std::string hosts;                ///< --hosts: judge this hosts file's capacity, not the provider's
  bool simulate_coverage = false;   ///< --simulate-coverage (matched-triplets only)
  bool pipeline_test_dose = false;  ///< --pipeline-test-dose (a from_pilot dose only; the CLI checks)
  std::string variance_from;        ///< --variance-from DB (ab-pairs only; the CLI checks)
};

/// Plans campaign `c` (as loaded by load_campaign; `pinned_commit: build` resolved here, a
/// preview when r.db is "") for `r`, prints the plan on env.out and returns the exit code
/// (harness/cli/exit_codes.hpp):
///   kOk 0     planned (and stored in r.db when given, the schedule JSON in r.out when given);
///   kError 2  refused, nothing stored, with the reason on env.err and "stored nothing: ..." on
///             env.out: the variants boot the same kernel (ab_same_kernel.hpp), the capacity of
///             the engine or hosts file (harness/pool/capacity.hpp), the guests' kernel is not the
///             pilot's (pilot_match.hpp pilot_image_kernel_refusal), or a kind: ci design cannot
///             detect its tolerances (plan_sensitivity.hpp; docs/CI.md).
/// Throws as plan(), env.open_db (r.variance_from not a campaign DB), std::runtime_error when
/// r.out cannot be written, results::DbError when r.db holds another plan.
int plan_command(Campaign c, const PlanRequest& r, const CommandEnv& env);

}  // namespace harness::campaign
