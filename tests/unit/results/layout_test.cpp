// Files results::Db creates store canary_requests and telemetry WITHOUT ROWID (one b-tree in
// primary-key order); a file of the earlier layout (rowid tables, as every file created before
// 2026-12-03 has) keeps it, and bundles and campaign DBs of either layout import into each other
// with the same rows.
#include "results/db.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <tuple>
#include <vector>

namespace {

/// Whether `table` of `db` has a rowid (SELECT rowid fails on a WITHOUT ROWID table).
bool has_rowid(results::Db& db, const std::string& table) {
  try {
    results::Stmt q(db, "SELECT rowid FROM " + table + " LIMIT 1");
    return true;
  } catch (const results::DbError&) {
    return false;
  }
}

/// A results DB at `path` in the layout before 2026-12-03: the schema with every WITHOUT ROWID
/// clause taken out, written through SQLite directly as an older harness did.
void create_rowid_layout(const std::string& path) {
  std::string sql(results::schema_sql());
  const std::string clause = " WITHOUT ROWID";
  int removed = 0;
  for (auto at = sql.find(clause); at != std::string::npos; at = sql.find(clause)) {
    sql.erase(at, clause.size());
    ++removed;
  }
  // canary_requests and telemetry, plus the schema's comment naming the clause.
  ASSERT_GE(removed, 2);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string message = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

/// A bundle holding case `id`: 3 requests of each canary and 4 telemetry samples, inserted out
/// of key order.
void fill_bundle(const std::string& path, const std::string& id) {
  results::Db b(path, results::Db::Mode::Create);
  const std::string q = "'" + id + "'";
  b.exec("INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json) VALUES (" + q +
         ", 'c', 'vm0', 'fast-structured', 1, 'static-zram', 'completed', '{}')");
  for (const char* canary : {"sqlite", "compute"})
    for (int seq : {2, 0, 1})
      b.exec("INSERT INTO canary_requests(case_id, canary, seq, scheduled_ns, wake_ns, completion_ns) VALUES (" + q +
             ", '" + canary + "', " + std::to_string(seq) + ", " + std::to_string(100 * seq) + ", " +
             std::to_string(100 * seq + 7) + ", " + std::to_string(100 * seq + 50) + ")");
  for (int t : {3, 1, 0, 2})
    b.exec("INSERT INTO telemetry(case_id, t_ns, phase, bg_some_us) VALUES (" + q + ", " + std::to_string(t) +
           ", 'pressure', " + std::to_string(10 * t) + ")");
  b.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

using Rows = std::vector<std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>>;

/// The case's canary requests (canary, seq, wake delay ns, service ns) and telemetry samples
/// ("telemetry", t_ns, bg_some_us, 0), each in key order.
Rows rows_of(results::Db& db, const std::string& id) {
  Rows out;
  results::Stmt r(db,
                  "SELECT canary, seq, wake_ns - scheduled_ns, completion_ns - wake_ns FROM canary_requests "
                  "WHERE case_id = ?1 ORDER BY canary, seq");
  r.bind(1, id);
  while (r.step()) out.emplace_back(r.text(0), r.int64(1), r.int64(2), r.int64(3));
  results::Stmt t(db, "SELECT t_ns, bg_some_us FROM telemetry WHERE case_id = ?1 ORDER BY t_ns");
  t.bind(1, id);
  while (t.step()) out.emplace_back("telemetry", t.int64(0), t.int64(1), 0);
  return out;
}

}  // namespace

TEST(DbLayout, NewFilesStoreCanaryRequestsAndTelemetryWithoutRowid) {
  test_support::TempDir dir("hk-db-layout");
  results::Db db(dir / "new.db", results::Db::Mode::Create);
  EXPECT_FALSE(has_rowid(db, "canary_requests"));
  EXPECT_FALSE(has_rowid(db, "telemetry"));
  EXPECT_TRUE(has_rowid(db, "cases"));
}

TEST(DbLayout, AFileOfTheEarlierLayoutKeepsItsRowidTables) {
  test_support::TempDir dir("hk-db-layout");
  ASSERT_NO_FATAL_FAILURE(create_rowid_layout(dir / "old.db"));
  results::Db db(dir / "old.db", results::Db::Mode::Create);
  EXPECT_TRUE(has_rowid(db, "canary_requests"));
  EXPECT_TRUE(has_rowid(db, "telemetry"));
}

TEST(DbLayout, BundlesOfEitherLayoutImportIntoCampaignDbsOfEitherLayoutWithTheSameRows) {
  const Rows expected = {{"compute", 0, 7, 43},      {"compute", 1, 7, 43},       {"compute", 2, 7, 43},
                         {"sqlite", 0, 7, 43},       {"sqlite", 1, 7, 43},        {"sqlite", 2, 7, 43},
                         {"telemetry", 0, 0, 0},     {"telemetry", 1, 10, 0},     {"telemetry", 2, 20, 0},
                         {"telemetry", 3, 30, 0}};
  for (bool old_bundle : {false, true})
    for (bool old_campaign : {false, true}) {
      SCOPED_TRACE(std::string("bundle ") + (old_bundle ? "rowid" : "without rowid") + ", campaign DB " +
                   (old_campaign ? "rowid" : "without rowid"));
      test_support::TempDir dir("hk-db-layout");
      if (old_bundle) {
        ASSERT_NO_FATAL_FAILURE(create_rowid_layout(dir / "bundle.db"));
      }
      fill_bundle(dir / "bundle.db", "k.a1-x");
      if (old_campaign) {
        ASSERT_NO_FATAL_FAILURE(create_rowid_layout(dir / "campaign.db"));
      }
      results::Db campaign(dir / "campaign.db", results::Db::Mode::Create);
      ASSERT_EQ(has_rowid(campaign, "canary_requests"), old_campaign);
      EXPECT_EQ(results::import_bundle(campaign, dir / "bundle.db", "k", {}, "k.a1-x"), 6);
      EXPECT_EQ(rows_of(campaign, "k"), expected);
      // A second import of the same case replaces its rows in either layout.
      EXPECT_EQ(results::import_bundle(campaign, dir / "bundle.db", "k", {}, "k.a1-x"), 6);
      EXPECT_EQ(rows_of(campaign, "k"), expected);
    }
}
