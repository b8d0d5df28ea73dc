#pragma once
// `harness check`'s policy once its options are parsed (ours; docs/CI.md, docs/OUTPUTS.md "Exit
// codes"): the campaign it checks, the refusals before any case runs (same kernel, a
// --baseline-db without an A/B design or from another harness build, a --judge DB of another
// campaign or design, a DB that holds an earlier run), the runs (one, or one per look with
// --until-decided), the judgement (check_judge.hpp), the DB a run writes, and the outcome.
//
// The DB: CI never passes on stale data, so a check writes a new DB per invocation unless one is
// named, and a named DB that already holds a run is refused unless --reuse.
#include "harness/campaign/check/check_judge.hpp"
#include "harness/campaign/commands/command_env.hpp"
#include "harness/error/expected.hpp"

#include <optional>
#include <string>

namespace harness::campaign {

/// The options of one `harness check`, as parsed (the CLI refuses, as usage errors, the
/// combinations that never make sense: --until-decided without --max-pairs and the reverse,
/// --until-decided with --baseline-db, --judge with a DB argument).
struct CheckRequest {
  std::string file;           ///< FILE: campaign YAML with `assertions:` or design ab-pairs
  std::string db;             ///< DB or --db ("" = a new DB per invocation, check_run_db)
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
  KcidbOptions kcidb;         ///< --kcidb FILE, --kcidb-origin, --kcidb-git-url, --kcidb-git-commit, --kcidb-artifacts-url
};

/// The outcome of a verdict: ok, finding, inconclusive as they are; cannot_judge could_not_run.
CommandOutcome check_outcome(CheckVerdict v);

/// A new DB path for one check of campaign `campaign`: ./<campaign>-<UTC YYYYmmddTHHMMSSZ>.db,
/// with -2, -3, ... before ".db" when that file exists.
std::string fresh_check_db(const std::string& campaign);

/// The DB a check of campaign `campaign` writes: `named`, else fresh_check_db(campaign). A DB
/// that already holds attempts or cases is refused unless `reuse`: the Problem "PATH already
/// holds an earlier run ..." (check_command prints it after "harness check: " on env.err:
/// CommandOutcome::could_not_run). Prints "check database: PATH (new run)" or, reused, what is
/// judged again on env.out. Throws env.check_target's error when `named` is not a campaign DB.
Expected<std::string> check_run_db(const std::string& campaign, const std::string& named, bool reuse,
                                   const CommandEnv& env);

/// Runs `harness check` for `r` and returns its outcome (harness/cli/exit_codes.hpp exit_code_of
/// gives the exit code, docs/CI.md):
///   ok             every assertion passed and, A/B, every metric is within its tolerance;
///   finding        an assertion failed or a metric regressed;
///   inconclusive   no finding, and some metric's interval decided nothing (with
///                  --until-decided: still undecided once --max-pairs is reached);
///   could_not_run  refused before any case ran, each said on env.err: the same-kernel rule (not
///                  with --judge), --baseline-db with a campaign that is not ab-pairs, a
///                  --baseline-db that is unreadable or refused (check_judge.hpp
///                  baseline_db_refusal; its harness commit compared only when cases run without
///                  --allow-env-drift), a --judge DB refused (judged_db_refusal), a DB holding an
///                  earlier run without --reuse (check_run_db), a refused preflight or capacity
///                  (command_campaign.hpp run_and_print); or the judgement could not compare (the
///                  environment drift refused, the variants not comparable).
/// Everything else it reports goes to env.out. Throws std::runtime_error naming FILE when a
/// campaign that is not A/B has no assertions, and as pinned_campaign, sequential_campaign,
/// run_campaign and judge otherwise.
CommandOutcome check_command(const CheckRequest& r, const CommandEnv& env);

}  // namespace harness::campaign
