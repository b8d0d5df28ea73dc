#pragma once
// The status report's views of attempts (harness/campaign/commands/status.hpp): aggregates and
// the fields of detail_json it shows, read by SQLite (json_extract, avg) as the report has always
// read them. The rows themselves: attempts.hpp.
//
// Errors: DbError on any SQLite failure (a file without attempts or schedule included).
#include "results/db.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace results {

/// When the campaign's run attempts ran (operator actions and attempts without a start left out).
struct AttemptSpan {
  std::optional<std::int64_t> first_started_unix_ns;  ///< nullopt: nothing started yet
  std::optional<std::int64_t> last_ended_unix_ns;     ///< nullopt: none ended
  std::int64_t in_flight = 0;                         ///< rows with status `running_status`
};
AttemptSpan attempt_span(Db& db, const std::string& running_status);

/// The attempts that gave the finished cases (schedule.state `completed` or `lost`) their
/// outcome: each such case's highest attempt with that status and an end.
struct FinishedAttempts {
  std::int64_t count = 0;
  /// Their mean duration (ended - started), ns, as SQLite's avg() gives it read as an integer
  /// (truncated); nullopt when there are none.
  std::optional<std::int64_t> mean_ns;
};
FinishedAttempts finished_attempts(Db& db, const std::string& completed, const std::string& lost);

/// An attempt in flight: detail_json's phase and runner_pid as text (nullopt when absent).
struct InFlightAttempt {
  std::string case_id;
  std::int64_t attempt = 0;
  std::optional<std::string> phase, runner_pid;
};
/// Rows with status `running_status`, by case id.
std::vector<InFlightAttempt> in_flight_attempts(Db& db, const std::string& running_status);

/// An attempt taken over from an interrupted runner (kind adopted) that has its outcome.
struct AdoptedAttempt {
  std::string case_id;
  std::int64_t attempt = 0;
  std::string status;
  std::optional<std::int64_t> takeovers;  ///< entries of detail_json's takeovers
};
/// Rows of kind adopted whose status is not `running_status`, by case id.
std::vector<AdoptedAttempt> adopted_attempts(Db& db, const std::string& running_status);

/// An operator's action (attempts kind mark-infra or reset-infra).
struct OperatorAction {
  std::string case_id;
  std::int64_t attempt = 0;
  std::optional<std::string> detail_json;
  std::optional<std::string> operator_name, reason;  ///< detail_json's operator and reason as text
};
/// Rows of kind `kind` (mark-infra | reset-infra), by end time, then case id.
std::vector<OperatorAction> operator_actions(Db& db, const std::string& kind);

/// Case ids that ran: every case with an attempts row, and every scheduled case whose state is
/// not `pending_state`; in no particular order.
std::vector<std::string> started_case_ids(Db& db, const std::string& pending_state);

/// Rows of attempts.
std::int64_t attempt_count(Db& db);

}  // namespace results
