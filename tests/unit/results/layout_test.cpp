// The layouts of a results file (results/schema.sql). Since schema version 5, files results::Db
// creates keep canary_requests, telemetry and controller_events under cases.case_key, in
// <name>_rows tables read through views of the plain names. A file of version 4 (captured in
// tests/fixtures/results-schema-v4.sql; before 2026-12-03 its large tables had rowids, after it
// they were WITHOUT ROWID) is read as it is when opened read-only and converted, with the same
// rows, when opened for writing; bundles of every layout import into a campaign DB with the
// same rows.
#include "results/db.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/unit/results/v4_file.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace {

enum class Layout { V4Rowid, V4WithoutRowid, Current };

const char* name(Layout l) {
  return l == Layout::V4Rowid ? "version 4, rowid tables"
                              : l == Layout::V4WithoutRowid ? "version 4, WITHOUT ROWID" : "current";
}

/// Whether `table` of `db` has a rowid (SELECT rowid fails on a WITHOUT ROWID table and a view).
bool has_rowid(results::Db& db, const std::string& table) {
  try {
    results::Stmt q(db, "SELECT rowid FROM " + table + " LIMIT 1");
    return true;
  } catch (const results::DbError&) {
    return false;
  }
}

std::string type_of(results::Db& db, const std::string& object) {
  results::Stmt q(db, "SELECT type FROM sqlite_master WHERE name = ?1");
  q.bind(1, object);
  return q.step() ? q.text(0) : "none";
}

std::string schema_version(results::Db& db) {
  results::Stmt q(db, "SELECT value FROM schema_info WHERE key = 'schema_version'");
  return q.step() ? q.text(0) : "none";
}

/// The statements writing case `id`: 3 requests of each canary, 4 telemetry samples and 2
/// controller events, inserted out of key order, and one phase.
std::string case_sql(const std::string& id) {
  const std::string q = "'" + id + "'";
  std::string sql = "INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json) VALUES (" +
                    q + ", 'c', 'vm0', 'fast-structured', 1, 'static-zram', 'completed', '{}');";
  sql += "INSERT INTO phases(case_id, phase, start_ns, end_ns) VALUES (" + q + ", 'pressure', 1, 3);";
  for (const char* canary : {"sqlite", "compute"})
    for (int seq : {2, 0, 1})
      sql += "INSERT INTO canary_requests(case_id, canary, seq, scheduled_ns, wake_ns, completion_ns) VALUES (" + q +
             ", '" + canary + "', " + std::to_string(seq) + ", " + std::to_string(100 * seq) + ", " +
             std::to_string(100 * seq + 7) + ", " + std::to_string(100 * seq + 50) + ");";
  for (int t : {3, 1, 0, 2})
    sql += "INSERT INTO telemetry(case_id, t_ns, phase, bg_some_us) VALUES (" + q + ", " + std::to_string(t) +
           ", 'pressure', " + std::to_string(10 * t) + ");";
  sql += "INSERT INTO controller_events(case_id, t_ns, kind, delta_us) VALUES (" + q + ", 2, 'trigger', 7), (" + q +
         ", 1, 'window', 5);";
  return sql;
}

/// A results file at `path` of `layout` holding the cases `ids`.
void create_with_cases(const std::string& path, Layout layout, const std::vector<std::string>& ids) {
  if (layout == Layout::Current) {
    results::Db db(path, results::Db::Mode::Create);
    for (const auto& id : ids) db.exec(case_sql(id));
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    return;
  }
  ASSERT_NO_FATAL_FAILURE(test_support::create_v4_file(path, layout == Layout::V4Rowid));
  for (const auto& id : ids) ASSERT_NO_FATAL_FAILURE(test_support::raw_exec(path, case_sql(id)));
}

using Rows = std::vector<std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>>;

/// The case's canary requests (canary, seq, wake delay ns, service ns), telemetry samples
/// ("telemetry", t_ns, bg_some_us, 0), controller events (kind, t_ns, delta_us, 0) and phases
/// (phase, start_ns, end_ns, 0), each in key order, read by case id.
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
  results::Stmt e(db, "SELECT kind, t_ns, delta_us FROM controller_events WHERE case_id = ?1 ORDER BY t_ns");
  e.bind(1, id);
  while (e.step()) out.emplace_back(e.text(0), e.int64(1), e.int64(2), 0);
  results::Stmt p(db, "SELECT phase, start_ns, end_ns FROM phases WHERE case_id = ?1 ORDER BY start_ns");
  p.bind(1, id);
  while (p.step()) out.emplace_back(p.text(0), p.int64(1), p.int64(2), 0);
  return out;
}

const Rows kExpected = {{"compute", 0, 7, 43},  {"compute", 1, 7, 43},  {"compute", 2, 7, 43}, {"sqlite", 0, 7, 43},
                        {"sqlite", 1, 7, 43},   {"sqlite", 2, 7, 43},   {"telemetry", 0, 0, 0}, {"telemetry", 1, 10, 0},
                        {"telemetry", 2, 20, 0}, {"telemetry", 3, 30, 0}, {"window", 1, 5, 0},   {"trigger", 2, 7, 0},
                        {"pressure", 1, 3, 0}};

std::int64_t count(results::Db& db, const std::string& sql) {
  results::Stmt q(db, sql);
  return q.step() ? q.int64(0) : -1;
}

}  // namespace

TEST(DbLayout, NewFilesKeepTheLargeTablesUnderTheCaseKey) {
  test_support::TempDir dir("hk-db-layout");
  results::Db db(dir / "new.db", results::Db::Mode::Create);
  EXPECT_EQ(schema_version(db), "8");
  for (const char* t : results::kCaseKeyedTables) {
    EXPECT_EQ(type_of(db, t), "view") << t;
    EXPECT_EQ(type_of(db, std::string(t) + "_rows"), "table") << t;
  }
  EXPECT_FALSE(has_rowid(db, "canary_requests_rows"));
  EXPECT_FALSE(has_rowid(db, "telemetry_rows"));
  EXPECT_TRUE(has_rowid(db, "cases"));
  EXPECT_EQ(count(db, "SELECT count(*) FROM pragma_table_info('canary_requests_rows') WHERE name = 'case_id'"), 0);
}

TEST(DbLayout, ThroughTheViewsRowsAreWrittenUpdatedAndDeletedByCaseId) {
  test_support::TempDir dir("hk-db-layout");
  results::Db db(dir / "new.db", results::Db::Mode::Create);
  db.exec(case_sql("a"));
  db.exec(case_sql("b"));
  EXPECT_EQ(rows_of(db, "a"), kExpected);
  db.exec("UPDATE canary_requests SET wake_ns = wake_ns + 1 WHERE case_id = 'a' AND canary = 'sqlite'");
  db.exec("UPDATE controller_events SET delta_us = 9 WHERE case_id = 'a' AND kind = 'trigger'");
  db.exec("DELETE FROM telemetry WHERE case_id = 'a' AND t_ns >= 2");
  Rows want = kExpected;
  for (int i = 3; i < 6; ++i) want[i] = {"sqlite", i - 3, 8, 42};
  want.erase(want.begin() + 8, want.begin() + 10);
  want[9] = {"trigger", 2, 9, 0};
  EXPECT_EQ(rows_of(db, "a"), want);
  EXPECT_EQ(rows_of(db, "b"), kExpected) << "rows of another case changed";
  // A case id that names no case is refused, as the foreign key of version 4 refused it.
  EXPECT_THROW(db.exec("INSERT INTO canary_requests(case_id, canary, seq, scheduled_ns) VALUES ('nope', 'compute', 0, 0)"),
               results::DbError);
  // Deleting a case deletes its rows (ON DELETE CASCADE through case_key).
  db.exec("DELETE FROM cases WHERE case_id = 'b'");
  for (const char* t : results::kCaseKeyedTables)
    EXPECT_EQ(count(db, std::string("SELECT count(*) FROM ") + t + "_rows WHERE case_key NOT IN (SELECT case_key FROM cases)"),
              0)
        << t;
  EXPECT_TRUE(rows_of(db, "b").empty());
}

TEST(DbLayout, AVersionFourFileIsReadAsItIsWhenOpenedReadOnly) {
  for (Layout layout : {Layout::V4Rowid, Layout::V4WithoutRowid}) {
    SCOPED_TRACE(name(layout));
    test_support::TempDir dir("hk-db-layout");
    ASSERT_NO_FATAL_FAILURE(create_with_cases(dir / "old.db", layout, {"a", "b"}));
    results::Db db(dir / "old.db", results::Db::Mode::ReadOnly);
    EXPECT_EQ(schema_version(db), "4");
    EXPECT_EQ(type_of(db, "canary_requests"), "table");
    EXPECT_EQ(rows_of(db, "a"), kExpected);
    EXPECT_EQ(rows_of(db, "b"), kExpected);
  }
}

TEST(DbLayout, AVersionFourFileOpenedForWritingGetsCaseKeysAndKeepsEveryRow) {
  for (Layout layout : {Layout::V4Rowid, Layout::V4WithoutRowid})
    for (auto mode : {results::Db::Mode::ReadWrite, results::Db::Mode::Create}) {
      SCOPED_TRACE(std::string(name(layout)) + (mode == results::Db::Mode::Create ? ", Create" : ", ReadWrite"));
      test_support::TempDir dir("hk-db-layout");
      ASSERT_NO_FATAL_FAILURE(create_with_cases(dir / "old.db", layout, {"b", "a"}));
      {
        results::Db db(dir / "old.db", mode);
        EXPECT_EQ(schema_version(db), "8");
        for (const char* t : results::kCaseKeyedTables) EXPECT_EQ(type_of(db, t), "view") << t;
        EXPECT_EQ(type_of(db, "cases_before_v5"), "none");
        EXPECT_EQ(rows_of(db, "a"), kExpected);
        EXPECT_EQ(rows_of(db, "b"), kExpected);
        EXPECT_EQ(count(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
        // The tables keyed by case id still name cases and are still checked against it.
        EXPECT_THROW(db.exec("INSERT INTO phases(case_id, phase, start_ns) VALUES ('nope', 'warmup', 0)"),
                     results::DbError);
        // The cases keep their order (case_key follows the former rowid: b was written first).
        results::Stmt q(db, "SELECT case_id FROM cases ORDER BY case_key");
        ASSERT_TRUE(q.step());
        EXPECT_EQ(q.text(0), "b");
      }
      // Converted once: opened again, it is the same.
      results::Db db(dir / "old.db", results::Db::Mode::ReadWrite);
      EXPECT_EQ(rows_of(db, "a"), kExpected);
    }
}

TEST(DbLayout, RowsOfNoCaseStopTheConversionAndLeaveTheFileAsItWas) {
  test_support::TempDir dir("hk-db-layout");
  ASSERT_NO_FATAL_FAILURE(create_with_cases(dir / "old.db", Layout::V4WithoutRowid, {"a"}));
  ASSERT_NO_FATAL_FAILURE(
      test_support::raw_exec(dir / "old.db", "INSERT INTO telemetry(case_id, t_ns) VALUES ('gone', 1), ('gone', 2)"));
  try {
    results::Db db(dir / "old.db", results::Db::Mode::ReadWrite);
    FAIL() << "a file with rows of no case was converted";
  } catch (const results::DbError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("old.db"), std::string::npos) << what;
    EXPECT_NE(what.find("telemetry holds 2 rows"), std::string::npos) << what;
  }
  results::Db db(dir / "old.db", results::Db::Mode::ReadOnly);
  EXPECT_EQ(schema_version(db), "4");
  EXPECT_EQ(type_of(db, "telemetry"), "table");
  EXPECT_EQ(rows_of(db, "a"), kExpected);
  EXPECT_EQ(count(db, "SELECT count(*) FROM telemetry WHERE case_id = 'gone'"), 2);
}

TEST(DbLayout, BundlesOfEveryLayoutImportIntoCampaignDbsOfEveryLayoutWithTheSameRows) {
  for (Layout bundle_layout : {Layout::V4Rowid, Layout::V4WithoutRowid, Layout::Current})
    for (Layout campaign_layout : {Layout::V4Rowid, Layout::V4WithoutRowid, Layout::Current}) {
      SCOPED_TRACE(std::string("bundle ") + name(bundle_layout) + ", campaign DB " + name(campaign_layout));
      test_support::TempDir dir("hk-db-layout");
      // The bundle holds another case first, so that its case key differs from the campaign DB's.
      ASSERT_NO_FATAL_FAILURE(create_with_cases(dir / "bundle.db", bundle_layout, {"other", "k.a1-x"}));
      ASSERT_NO_FATAL_FAILURE(create_with_cases(dir / "campaign.db", campaign_layout, {"j"}));
      results::Db campaign(dir / "campaign.db", results::Db::Mode::ReadWrite);
      EXPECT_EQ(results::import_bundle(campaign, dir / "bundle.db", "k", {}, "k.a1-x"), 6);
      EXPECT_EQ(rows_of(campaign, "k"), kExpected);
      EXPECT_EQ(rows_of(campaign, "j"), kExpected);
      EXPECT_TRUE(rows_of(campaign, "other").empty());
      // A second import of the same case replaces its rows.
      EXPECT_EQ(results::import_bundle(campaign, dir / "bundle.db", "k", {}, "k.a1-x"), 6);
      EXPECT_EQ(rows_of(campaign, "k"), kExpected);
      EXPECT_EQ(rows_of(campaign, "j"), kExpected);
      EXPECT_EQ(count(campaign, "SELECT count(*) FROM canary_requests_rows"), 12);
    }
}
