#pragma once
// `harness plan`'s policy once its options are parsed and FILE is loaded (ours; docs/CAMPAIGN.md,
// docs/CI.md "Deciding with more pairs", docs/OUTPUTS.md "Exit codes"): the refusals before anything
// is stored, the schedule and where it is stored, and what is printed about the design.
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/commands/command_env.hpp"

#include <string>
#include <vector>

namespace harness::campaign {

/// What keeps a plan from being preregistered (`harness plan FILE DB`) or run as it is.
enum class PlanRefusalKind {
  same_kernel,   ///< the variants boot the same kernel (ab_same_kernel.hpp)
  capacity,      ///< the guests do not fit their hosts (harness/pool/capacity.hpp)
  pilot_kernel,  ///< the guests' kernel is not the pilot's (pilot_match.hpp)
  insensitive,   ///< a kind: ci design cannot detect its tolerances (plan_sensitivity.hpp)
};

/// One refusal: which, and why with its remedy.
struct PlanRefusal {
  PlanRefusalKind kind;
  std::string why;   ///< the reason and what to do, ending in a newline
  std::string what;  ///< short: the tail of "stored nothing: <what>"
};

/// The options of one `harness plan`, as parsed.
struct PlanRequest {
  std::string db;                   ///< DB or --db: store the plan there ("" = print it, store nothing)
  std::string out;                  ///< --out: also write the schedule JSON here ("" = no)
  std::string hosts;                ///< --hosts: judge this hosts file's capacity, not the provider's
  bool simulate_coverage = false;   ///< --simulate-coverage (matched blocks of k arms: matched-triplets, matched-blocks)
  bool pipeline_test_dose = false;  ///< --pipeline-test-dose (a from_pilot dose only; the CLI checks)
  std::string variance_from;        ///< --variance-from DB (ab-pairs only; the CLI checks)
  bool list_cases = false;          ///< --cases: print one row per planned case (run order)
};

/// Plans campaign `c` (as loaded by load_campaign; `pinned_commit: build` resolved here, a
/// preview when r.db is "") for `r`, prints the plan on env.out and returns its outcome
/// (harness/cli/exit_codes.hpp exit_code_of gives the exit code). The whole design is printed
/// first, in every outcome (ours, issue 59): header, design (arms, strata, coverage,
/// sensitivity), the case rows only with r.list_cases, then the summary last (engine and
/// capacity, wall time, schedule SHA-256), then each PlanRefusal with its remedy, then where the
/// plan went.
///   ok             planned (stored in r.db when given, the schedule JSON in r.out when given);
///                  also a preview (no r.db) that preregistration would refuse: the refusals are
///                  printed on env.out as "NOT PLANNABLE AS IS ...", nothing is stored (only
///                  preregistration and `harness run` refuse);
///   could_not_run  preregistration refused, nothing stored (nor r.out written), each reason on
///                  env.err ("harness plan: ...") and "stored nothing: ..." on env.out; or a
///                  --variance-from DB of the wrong kind (plan_sensitivity.hpp VarianceDbProblem),
///                  preview or not, named on env.err. The guests' kernel is compared with a
///                  pilot's where the engine knows it before boot (harness/pool/pool.hpp
///                  Capabilities::kernel_known_before_boot).
/// Throws as plan(), env.open_db (r.variance_from not a campaign DB), std::runtime_error when
/// r.out cannot be written, results::DbError when r.db holds another plan.
CommandOutcome plan_command(Campaign c, const PlanRequest& r, const CommandEnv& env);

}  // namespace harness::campaign
