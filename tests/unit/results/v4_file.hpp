#pragma once
// Results files of schema version 4, written as an older harness wrote them (through SQLite
// directly, not results::Db, which would convert them): the schema captured in
// tests/fixtures/results-schema-v4.sql.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <sstream>
#include <string>

namespace test_support {

/// Runs `sql` on the file `path` through SQLite directly (foreign keys off, as SQLite opens).
/// Fails the test (ASSERT) on an SQLite error.
inline void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK) << path;
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string message = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << path << ": " << message;
}

/// An empty results file of schema version 4 at `path`; with `rowid`, every WITHOUT ROWID
/// clause taken out (the layout of files created before 2026-12-03). Fails the test (ASSERT)
/// when the fixture is missing or does not apply.
inline void create_v4_file(const std::string& path, bool rowid) {
  std::ifstream in(std::string(HARNESS_SOURCE_DIR) + "/tests/fixtures/results-schema-v4.sql");
  ASSERT_TRUE(in) << "tests/fixtures/results-schema-v4.sql";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string sql = ss.str();
  if (rowid) {
    const std::string clause = " WITHOUT ROWID";
    int removed = 0;
    for (auto at = sql.find(clause); at != std::string::npos; at = sql.find(clause)) {
      sql.erase(at, clause.size());
      ++removed;
    }
    ASSERT_GE(removed, 2);  // canary_requests and telemetry, plus the schema's comment naming the clause
  }
  ASSERT_NO_FATAL_FAILURE(raw_exec(path, sql));
}

}  // namespace test_support
