#pragma once
// attempts (results/schema.sql, campaign DB only): every attempt of every case, the in-flight
// row of an attempt under way, and every operator action (the audit trail), read and written as
// rows. What the runner and the operator commands write there, and when, is
// harness/campaign/store/ (docs/PROTOCOL.md); the status report's views of the rows are
// attempt_views.hpp.
//
// Errors: DbError on any SQLite failure.
#include "results/db.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace results {

/// One row of attempts.
struct AttemptRow {
  std::string case_id;
  std::int64_t attempt = 1;  ///< 1-based
  std::optional<std::string> host;  ///< agent URL, VM name or "operator"
  /// completed | infra_failed | lost | marked_infra | reset_infra | running (in flight)
  std::string status;
  std::optional<std::string> error;
  std::optional<std::int64_t> started_unix_ns, ended_unix_ns;  ///< wall clock, ns since the epoch
  std::string kind = "run";  ///< run | adopted | interrupted | mark-infra | reset-infra
  std::optional<std::string> detail_json;
};

/// Every row, by case id and attempt; empty when the file has no attempts table (a DB of before
/// the table, read-only). A file written before the columns kind and detail_json reads kind
/// "run" and no detail.
std::vector<AttemptRow> read_attempts(Db& db);

/// The rows of `case_id`, by attempt.
std::vector<AttemptRow> read_case_attempts(Db& db, const std::string& case_id);

/// The row of `case_id` with status `status` and the highest attempt number; nullopt when none.
std::optional<AttemptRow> latest_attempt_with_status(Db& db, const std::string& case_id, const std::string& status);

/// The error of `case_id`'s highest attempt; nullopt when it has no attempt or that error is NULL.
std::optional<std::string> last_attempt_error(Db& db, const std::string& case_id);

/// Inserts `a` (a new attempt: a second row of the same case and attempt is refused).
void insert_attempt(Db& db, const AttemptRow& a);

/// Inserts `a`, replacing the row of the same case and attempt (an attempt's outcome replaces
/// its in-flight row).
void replace_attempt(Db& db, const AttemptRow& a);

/// Replaces detail_json, kind and host of the row of `a`'s case and attempt while its status is
/// `status` (a row that has its outcome already is left as it is).
void update_attempt_detail(Db& db, const AttemptRow& a, const std::string& status);

}  // namespace results
