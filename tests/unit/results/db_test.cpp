// results::Stmt::bind_all: values go to parameters 1..N in order, empty optionals as NULL.
#include "results/db.hpp"
#include "tests/unit/results/v4_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace {

using Row = std::vector<results::Value>;
const results::Value kNull{};

// A fresh results DB in the temp folder with one extra table `t(a, b, c, d, e)`.
struct TempDb {
  std::string path;
  results::Db db;
  explicit TempDb(const std::string& name)
      : path(fresh(name)), db(path, results::Db::Mode::Create) {
    db.exec("CREATE TABLE t(a INTEGER, b TEXT, c REAL, d INTEGER, e TEXT)");
  }
  ~TempDb() { std::filesystem::remove(path); }
  static std::string fresh(const std::string& name) {
    const auto p = std::filesystem::temp_directory_path() / ("hk_db_test_" + name + ".db");
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + suffix);
    return p.string();
  }
  // Every row of t, ordered by a.
  std::vector<Row> rows() {
    results::Stmt q(db, "SELECT a, b, c, d, e FROM t ORDER BY a");
    std::vector<Row> out;
    while (q.step()) out.push_back({q.value(0), q.value(1), q.value(2), q.value(3), q.value(4)});
    return out;
  }
};

}  // namespace

TEST(StmtBindAll, BindsEachValueToItsParameterInOrder) {
  TempDb t("bind_all_order");
  {
    results::Stmt s(t.db, "INSERT INTO t(a, b, c, d, e) VALUES (?,?,?,?,?)");
    s.bind_all(std::int64_t{7}, std::string("seven"), 0.5, std::optional<std::int64_t>(), std::optional<std::string>("x"))
        .run();
    s.bind_all(1, "one", 1.5, std::optional<std::int64_t>(11), std::optional<std::string>()).run();
  }
  EXPECT_EQ(t.rows(), (std::vector<Row>{{std::int64_t{1}, std::string("one"), 1.5, std::int64_t{11}, kNull},
                                        {std::int64_t{7}, std::string("seven"), 0.5, kNull, std::string("x")}}));
}

TEST(StmtBindAll, LeavesLaterParametersToBindByIndex) {
  TempDb t("bind_all_later");
  {
    results::Stmt s(t.db, "INSERT INTO t(a, b, c) VALUES (?,?,?)");
    s.bind_all(1, "b").bind(3, 3.0).run();
    s.bind_all(4).run();  // run() cleared the earlier bindings: b and c are NULL
  }
  EXPECT_EQ(t.rows(), (std::vector<Row>{{std::int64_t{1}, std::string("b"), 3.0, kNull, kNull},
                                        {std::int64_t{4}, kNull, kNull, kNull, kNull}}));
}

TEST(StmtBindAll, MoreValuesThanParametersThrowsDbError) {
  TempDb t("bind_all_range");
  results::Stmt s(t.db, "INSERT INTO t(a) VALUES (?)");
  EXPECT_THROW(s.bind_all(1, 2), results::DbError);
}

// A version-6 database (no cases.engine_kind) gains the column, NULL for its cases (the engine
// that gave their guests was not recorded), and the current version when opened for writing; read-only it
// is read as it is.
TEST(DbMigration, VersionSixGainsTheEngineKindColumn) {
  const auto path = TempDb::fresh("migrate_v6");
  {
    results::Db db(path, results::Db::Mode::Create);
  }
  ASSERT_NO_FATAL_FAILURE(test_support::raw_exec(
      path,
      "INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json, host_uri) "
      "VALUES ('c1', 'x', 'vm0', 'r', 1, 'static-zram', 'completed', '{}', 'local:h');"
      "ALTER TABLE cases DROP COLUMN engine_kind;"
      "UPDATE schema_info SET value = '6' WHERE key = 'schema_version';"));
  {
    results::Db ro(path, results::Db::Mode::ReadOnly);
    EXPECT_FALSE(results::has_column(ro, "cases", "engine_kind"));
  }
  results::Db db(path, results::Db::Mode::ReadWrite);
  results::Stmt v(db, "SELECT value FROM schema_info WHERE key = 'schema_version'");
  ASSERT_TRUE(v.step());
  EXPECT_EQ(v.text(0), "8");
  results::Stmt c(db, "SELECT host_uri, engine_kind FROM cases WHERE case_id = 'c1'");
  ASSERT_TRUE(c.step());
  EXPECT_EQ(c.text(0), "local:h");
  EXPECT_TRUE(c.is_null(1));
  // The column comes last, as in a new file (ALTER TABLE appends; schema.sql declares it last).
  results::Stmt last(db, "SELECT name FROM pragma_table_info('cases') ORDER BY cid DESC LIMIT 1");
  ASSERT_TRUE(last.step());
  EXPECT_EQ(last.text(0), "engine_kind");
}

// A version-7 database (telemetry without the reclaim CPU columns, its view without them) gains
// them in telemetry_rows, NULL for its samples, last in the column order; the view telemetry and
// its triggers are made again with them, and version 8 is recorded, when opened for writing;
// read-only it is read as it is.
TEST(DbMigration, VersionSevenGainsTheReclaimCpuColumns) {
  const auto path = TempDb::fresh("migrate_v7");
  {
    results::Db db(path, results::Db::Mode::Create);
  }
  // Version 7's layout: telemetry_rows without the five columns, and a view without them (the
  // view's columns do not matter to the conversion, only that it lacks the new ones).
  std::string sql = "INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json) "
                    "VALUES ('c1', 'x', 'vm0', 'r', 1, 'static-zram', 'completed', '{}');"
                    "INSERT INTO telemetry(case_id, t_ns, bg_some_us) VALUES ('c1', 5, 17);"
                    "DROP VIEW telemetry;";
  for (const char* c : {"kswapd_cpu_us", "bg_cpu_usage_us", "bg_cpu_system_us", "fg_cpu_usage_us", "fg_cpu_system_us"})
    sql += std::string("ALTER TABLE telemetry_rows DROP COLUMN ") + c + ";";
  sql += "CREATE VIEW telemetry AS SELECT c.case_id AS case_id, r.t_ns AS t_ns, r.bg_some_us AS bg_some_us "
         "FROM telemetry_rows r JOIN cases c ON c.case_key = r.case_key;"
         "UPDATE schema_info SET value = '7' WHERE key = 'schema_version';";
  ASSERT_NO_FATAL_FAILURE(test_support::raw_exec(path, sql));
  {
    results::Db ro(path, results::Db::Mode::ReadOnly);
    EXPECT_FALSE(results::has_column(ro, "telemetry", "kswapd_cpu_us"));
    EXPECT_FALSE(results::has_column(ro, "telemetry_rows", "kswapd_cpu_us"));
  }
  results::Db db(path, results::Db::Mode::ReadWrite);
  results::Stmt v(db, "SELECT value FROM schema_info WHERE key = 'schema_version'");
  ASSERT_TRUE(v.step());
  EXPECT_EQ(v.text(0), "8");
  results::Stmt t(db, "SELECT bg_some_us, kswapd_cpu_us, bg_cpu_system_us, fg_cpu_usage_us, sys_io_full_us FROM "
                      "telemetry WHERE case_id = 'c1'");
  ASSERT_TRUE(t.step());
  EXPECT_EQ(t.int64(0), 17);
  for (int i = 1; i < 5; ++i) EXPECT_TRUE(t.is_null(i)) << i;
  EXPECT_FALSE(t.step());
  // The view's INSERT trigger knows the new columns.
  db.exec("INSERT INTO telemetry(case_id, t_ns, kswapd_cpu_us, bg_cpu_usage_us, bg_cpu_system_us, fg_cpu_usage_us, "
          "fg_cpu_system_us) VALUES ('c1', 6, 10, 20, 30, 40, 50)");
  results::Stmt n(db, "SELECT kswapd_cpu_us + bg_cpu_usage_us + bg_cpu_system_us + fg_cpu_usage_us + fg_cpu_system_us "
                      "FROM telemetry_rows WHERE t_ns = 6");
  ASSERT_TRUE(n.step());
  EXPECT_EQ(n.int64(0), 150);
  // The five come last, in schema.sql's order, as in a new file.
  std::vector<std::string> cols = results::table_columns(db, "main", "telemetry_rows");
  ASSERT_GE(cols.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(cols.end() - 5, cols.end()),
            (std::vector<std::string>{"kswapd_cpu_us", "bg_cpu_usage_us", "bg_cpu_system_us", "fg_cpu_usage_us",
                                      "fg_cpu_system_us"}));
  results::Db fresh(TempDb::fresh("migrate_v7_fresh"), results::Db::Mode::Create);
  EXPECT_EQ(results::table_columns(fresh, "main", "telemetry_rows"), cols);
  EXPECT_EQ(results::table_columns(fresh, "main", "telemetry"), results::table_columns(db, "main", "telemetry"));
}

// A version-3 database (no cpu/io PSI columns, no reclaim_actions.write_cpu_us) gets them,
// NULL for its rows, and the current version when opened for writing; its rows are kept.
TEST(DbMigration, VersionThreeGainsTheVersionFourColumns) {
  const auto path = TempDb::fresh("migrate_v3");
  {
    std::string sql = "INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json) "
                      "VALUES ('c1', 'x', 'vm0', 'r', 1, 'static-zram', 'completed', '{}');"
                      "INSERT INTO telemetry(case_id, t_ns, bg_some_us) VALUES ('c1', 5, 17);";
    for (const char* c : {"bg_cpu_some_us", "bg_cpu_full_us", "bg_io_some_us", "bg_io_full_us", "fg_cpu_some_us",
                          "fg_cpu_full_us", "fg_io_some_us", "fg_io_full_us", "sys_cpu_some_us", "sys_cpu_full_us",
                          "sys_io_some_us", "sys_io_full_us"})
      sql += std::string("ALTER TABLE telemetry DROP COLUMN ") + c + ";";
    sql += "ALTER TABLE reclaim_actions DROP COLUMN write_cpu_us;"
           "UPDATE schema_info SET value = '3' WHERE key = 'schema_version';";
    ASSERT_NO_FATAL_FAILURE(test_support::create_v4_file(path, false));
    ASSERT_NO_FATAL_FAILURE(test_support::raw_exec(path, sql));
  }
  results::Db db(path, results::Db::Mode::ReadWrite);
  results::Stmt v(db, "SELECT value FROM schema_info WHERE key = 'schema_version'");
  ASSERT_TRUE(v.step());
  EXPECT_EQ(v.text(0), "8");
  results::Stmt t(db, "SELECT bg_some_us, bg_cpu_some_us, sys_io_full_us FROM telemetry WHERE case_id = 'c1'");
  ASSERT_TRUE(t.step());
  EXPECT_EQ(t.int64(0), 17);
  EXPECT_TRUE(t.is_null(1));
  EXPECT_TRUE(t.is_null(2));
  EXPECT_FALSE(t.step());
  results::Stmt r(db, "SELECT count(*) FROM pragma_table_info('reclaim_actions') WHERE name = 'write_cpu_us'");
  ASSERT_TRUE(r.step());
  EXPECT_EQ(r.int64(0), 1);
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path + s);
}

// A database file Db creates has 16 KiB pages; one created before (SQLite's 4 KiB) keeps its
// page size when opened again, Create mode included, and takes rows as before.
TEST(DbPageSize, NewFilesGet16KiBPagesExistingOnesKeepTheirs) {
  auto page_size = [](results::Db& db) {
    results::Stmt q(db, "PRAGMA page_size");
    return q.step() ? q.int64(0) : -1;
  };
  const auto fresh = TempDb::fresh("page_size_new");
  {
    results::Db db(fresh, results::Db::Mode::Create);
    EXPECT_EQ(page_size(db), 16384);
  }
  const auto old = TempDb::fresh("page_size_old");
  {
    results::Db db(old, results::Db::Mode::Create);
    db.exec("PRAGMA journal_mode=DELETE");
    db.exec("PRAGMA page_size=4096");
    db.exec("VACUUM");
    db.exec("PRAGMA journal_mode=WAL");
    ASSERT_EQ(page_size(db), 4096);
  }
  {
    results::Db db(old, results::Db::Mode::Create);
    EXPECT_EQ(page_size(db), 4096);
    db.exec("INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json) "
            "VALUES ('c1', 'x', 'vm0', 'r', 1, 'static-zram', 'completed', '{}')");
  }
  results::Db db(old, results::Db::Mode::ReadOnly);
  EXPECT_EQ(page_size(db), 4096);
  results::Stmt q(db, "SELECT count(*) FROM cases");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 1);
  for (const auto& p : {fresh, old})
    for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(p + s);
}
