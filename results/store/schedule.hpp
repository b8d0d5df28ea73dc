#pragma once
// schedule (results/schema.sql, campaign DB only): the preregistered plan, one row per planned
// case in execution order, and each case's state (pending | completed | infra_failed | lost).
//
// Errors: DbError on any SQLite failure, a file without the table included (a case bundle has
// one, empty; callers reading files of every version test results::has_table first).
#include "results/db.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace results {

/// One row of schedule.
struct ScheduleRow {
  std::string case_id;
  std::int64_t ordinal = 0;  ///< global order
  std::string vm, regime;    ///< the stratum
  std::int64_t repeat = 0;
  std::optional<std::string> triplet_id;  ///< matched block; nullopt for a pilot case
  std::string configuration;              ///< the arm's name (a row of arms)
  std::optional<std::int64_t> dose_bytes;  ///< memory.reclaim request, bytes
  std::string state = "pending";
};

/// Every row in plan order (ordinal).
std::vector<ScheduleRow> read_schedule(Db& db);

/// schedule.state of `case_id`; nullopt when it is not scheduled.
std::optional<std::string> schedule_state(Db& db, const std::string& case_id);

/// Sets schedule.state of `case_id` (no row: nothing changes).
void set_schedule_state(Db& db, const std::string& case_id, const std::string& state);

/// Inserts schedule rows, one statement prepared for all of them.
class ScheduleWriter {
 public:
  explicit ScheduleWriter(Db& db);
  void write(const ScheduleRow& row);

 private:
  Stmt insert_;
};

}  // namespace results
