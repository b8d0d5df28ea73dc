#pragma once
// One-value queries on a campaign DB, for the tests that check what a run stored (the
// campaign vm tests) and wait for a runner to reach a point (a case in a phase) before
// they kill it. Header-only; include as "tests/common/db_query.hpp".
#include "results/db.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>

namespace test_support {

/// The first column of the first row of `sql` as an integer; -1 when no row or NULL.
inline std::int64_t db_count(results::Db& db, const std::string& sql) {
  results::Stmt q(db, sql);
  if (!q.step() || q.is_null(0)) return -1;
  return q.int64(0);
}

/// The first column of the first row of `sql` as text; "(none)" when no row or NULL.
inline std::string db_text(results::Db& db, const std::string& sql) {
  results::Stmt q(db, sql);
  if (!q.step() || q.is_null(0)) return "(none)";
  return q.text(0);
}

/// Polls `sql` (one integer) on the DB at `db_path` every 200 ms until it is >= 1 or
/// `limit` passes (a DB that does not exist yet or is busy is polled again); false on timeout.
inline bool wait_for_db(const std::string& db_path, const std::string& sql, std::chrono::seconds limit) {
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < limit) {
    if (std::filesystem::exists(db_path)) {
      try {
        results::Db db(db_path, results::Db::Mode::ReadOnly);
        if (db_count(db, sql) >= 1) return true;
      } catch (const results::DbError&) {
        // busy or not yet written: polled again until the deadline, which fails the wait
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

}  // namespace test_support
