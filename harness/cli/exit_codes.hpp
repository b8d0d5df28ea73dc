#pragma once
// The exit codes of every `harness` subcommand: one table, printed in `harness --help`
// and in docs/OUTPUTS.md "Exit codes". A subcommand stores its code in
// harness::cli::exit_code() (registry.hpp); a campaign command's library function returns a
// typed outcome (harness/campaign/commands/command_env.hpp CommandOutcome) that exit_code_of
// below turns into its code, here and nowhere else; an exception that reaches main() exits with
// kError, and a command-line parse error (unknown option, missing argument, a value of the
// wrong type or out of range: validators.hpp) exits with kUsage instead of CLI11's own
// codes (105, 106, ...). A file the command line names that is missing or of the wrong
// kind (a missing DB, a non-DB file) is kError from every subcommand (open_db.hpp).
// Older per-command codes kept for their callers: `harness case run` 3 = infra_failed, 4 = lost (the
// agent reads it), `harness vm exec` 124 = guest timed out (timeout(1) convention).
#include "harness/campaign/commands/command_env.hpp"

namespace harness::cli {

/// Done; every check passed (check), a dose was chosen (pilot-select), host qualifies.
inline constexpr int kOk = 0;
/// Ran, and the answer is negative: an assertion or regression failed (check), no
/// eligible dose (pilot-select), a qualification check failed (qualify).
inline constexpr int kFinding = 1;
/// Could not run: bad input (file, line and field named), missing or wrong kind of DB,
/// refused preflight, infrastructure failure. Nothing was concluded.
inline constexpr int kError = 2;
/// Ran, and could not decide: `harness check` found no failed assertion and no regression,
/// but some metric's interval decides nothing (its verdict is "inconclusive": past the
/// tolerance without the whole interval beyond it, or with --until-decided neither wholly
/// beyond nor wholly within it at the cap). 5, not 3: `harness case run` keeps 3 and 4.
inline constexpr int kInconclusive = 5;
/// Command-line usage error (CLI11 parse or validation error).
inline constexpr int kUsage = 64;

/// The exit code of a campaign command's outcome: ok kOk, finding kFinding, could_not_run
/// kError, inconclusive kInconclusive.
constexpr int exit_code_of(campaign::CommandOutcome o) {
  switch (o) {
    case campaign::CommandOutcome::ok: return kOk;
    case campaign::CommandOutcome::finding: return kFinding;
    case campaign::CommandOutcome::inconclusive: return kInconclusive;
    case campaign::CommandOutcome::could_not_run: break;
  }
  return kError;
}

/// The table above as text, for --help footers and docs/OUTPUTS.md "Exit codes".
inline constexpr const char* kExitCodeTable =
    "Exit codes: 0 ok; 1 finding (a check or regression failed, no eligible dose, host "
    "does not qualify); 2 could not run (bad input, missing/wrong DB, refused preflight, "
    "infrastructure); 5 inconclusive (check: a metric's interval decided nothing; more pairs would); 64 "
    "command-line usage error.";

}  // namespace harness::cli
