#pragma once
// What one `harness check` judgement found, and its verdict (ours; docs/CI.md): the type the
// judge (check_judge.hpp) fills and the files written from it read (the KCIDB file,
// check_kcidb.hpp), kept apart so that neither includes the other.
#include "harness/campaign/check/ab_environment.hpp"
#include "harness/campaign/check/ab_report.hpp"

#include <optional>
#include <string>

namespace harness::campaign {

/// The verdict of a check (commands/check_command.hpp check_outcome turns it into the
/// command's outcome, exit codes 0, 1, 2 and 5). inconclusive: no finding, and some metric's
/// interval did not decide (verdict "inconclusive").
enum class CheckVerdict { ok, finding, cannot_judge, inconclusive };

/// Everything one judgement found.
struct Judgement {
  CheckOutcome outcome;   ///< assertions, metrics, warnings (in print order), refusal, Markdown parts
  bool ab = false;        ///< design ab-pairs: environment and metrics were (to be) compared
  /// A/B: the two sides' environments (absent for other designs).
  std::optional<EnvironmentComparison> environment;
  std::string error;          ///< why the variants could not be compared ("" = they were, or not A/B)
  std::string markdown_path;  ///< the Markdown file written ("" = none)
  std::string junit_path;     ///< the JUnit file written ("" = none)
  std::string kcidb_path;     ///< the KCIDB file written ("" = none)
  CheckVerdict verdict = CheckVerdict::ok;
  int failed_assertions() const;
  int regressions() const;
  int inconclusive() const;  ///< metrics with verdict "inconclusive"
};

/// The verdict rule: cannot_judge when the comparison was refused (outcome.refusal) or failed
/// (`error`), else finding when an assertion failed or a metric regressed, else inconclusive
/// when a metric's verdict is "inconclusive", else ok. Pure.
CheckVerdict verdict_of(const CheckOutcome& outcome, const std::string& error);

}  // namespace harness::campaign
