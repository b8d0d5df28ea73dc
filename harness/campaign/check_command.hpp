#pragma once
// `harness check`'s policy once its options are parsed (ours; docs/CI.md, README.md "Exit
// codes"): the campaign it checks, the refusals before any case runs (same kernel, a
// --baseline-db without an A/B design or from another harness build, a --judge DB of another
// campaign or design, a DB that holds an earlier run), the runs (one, or one per look with
// --until-decided), the judgement (check_judge.hpp) and the exit code.
#include "harness/campaign/check_judge.hpp"
#include "harness/campaign/command_env.hpp"

#include <string>

namespace harness::campaign {

/// The options of one `harness check`, as parsed (the CLI refuses, as usage errors, the
/// combinations that never make sense: --until-decided without --max-pairs and the reverse,
/// --until-decided with --baseline-db, --judge with a DB argument).
struct CheckRequest {
  std::string file;           ///< FILE: campaign YAML with `assertions:` or design ab-pairs
  std::string db;             ///< DB or --db ("" = a new DB per invocation, check_run_db.hpp)
  bool reuse = false;         ///< --reuse: resume a DB that holds an earlier run and judge all its cases
  std::string hosts;          ///< --hosts ("" = the campaign's provider)
  std::string junit, markdown;  ///< --junit, --markdown ("" = none; A/B Markdown default next to the DB)
  std::string baseline_db;    ///< --baseline-db ("" = both variants run here)
  bool allow_drift = false;   ///< --allow-env-drift
  bool plain = false;         ///< --plain progress lines
  std::string accelerator;    ///< --accel ("" = $HARNESS_ACCEL, else the provider's, else auto)
  bool until_decided = false; ///< --until-decided
  int max_pairs = 0;          ///< --max-pairs (with --until-decided)
  std::string judge;          ///< --judge DB ("" = run cases)
};

/// The exit code of a verdict (harness/cli/exit_codes.hpp): ok kOk (0), finding kFinding (1),
/// inconclusive kInconclusive (5), cannot_judge kError (2).
int check_exit_code(CheckVerdict v);

/// Runs `harness check` for `r` and returns its exit code (harness/cli/exit_codes.hpp, docs/CI.md):
///   kOk 0           every assertion passed and, A/B, every metric is within its tolerance;
///   kFinding 1      an assertion failed or a metric regressed;
///   kInconclusive 5 no finding, and some metric's interval decided nothing (with
///                   --until-decided: still undecided once --max-pairs is reached);
///   kError 2        refused before any case ran, each said on env.err: the same-kernel rule (not
///                   with --judge), --baseline-db with a campaign that is not ab-pairs, a
///                   --baseline-db that is unreadable or refused (check_judge.hpp
///                   baseline_db_refusal; its harness commit compared only when cases run without
///                   --allow-env-drift), a --judge DB refused (judged_db_refusal), a DB holding an
///                   earlier run without --reuse (check_run_db.hpp), a refused preflight or
///                   capacity (run_command.hpp run_and_print); or the judgement could not compare
///                   (the environment drift refused, the variants not comparable).
/// Everything else it reports goes to env.out. Throws std::runtime_error naming FILE when a
/// campaign that is not A/B has no assertions, and as pinned_campaign, sequential_campaign,
/// run_campaign and judge otherwise.
int check_command(const CheckRequest& r, const CommandEnv& env);

}  // namespace harness::campaign
