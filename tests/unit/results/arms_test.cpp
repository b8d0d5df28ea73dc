// Schema version 6 (results/schema.sql): the table arms, and cases.configuration and
// schedule.configuration checked against it by triggers instead of version 5's CHECK list.
// A version-5 campaign DB (tests/fixtures/results-schema-v5.sql: the schema as version 5 wrote
// it, with a campaign's rows) converted when opened for writing keeps every row of every table
// and view, its case keys, indexes, views and triggers, and gets one arms row per configuration
// it holds; a conversion killed or failing part-way leaves the file at version 5, intact, and
// the next open converts it; version-5 bundles import into a version-6 campaign DB.
#include "harness/digest/sha256.hpp"
#include "results/db.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/unit/results/v4_file.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace {

/// A version-5 campaign DB at `path`: the fixture (schema and rows) applied through SQLite
/// directly, then `extra` (SQL run after it, foreign keys on).
void create_v5_file(const std::string& path, const std::string& extra = "") {
  std::ifstream in(std::string(HARNESS_SOURCE_DIR) + "/tests/fixtures/results-schema-v5.sql");
  ASSERT_TRUE(in) << "tests/fixtures/results-schema-v5.sql";
  std::stringstream ss;
  ss << in.rdbuf();
  ASSERT_NO_FATAL_FAILURE(test_support::raw_exec(path, ss.str()));
  if (!extra.empty()) {
    ASSERT_NO_FATAL_FAILURE(test_support::raw_exec(path, "PRAGMA foreign_keys = ON;" + extra));
  }
}

std::string value_text(const results::Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return "NULL";
  if (auto* i = std::get_if<std::int64_t>(&v)) return "i" + std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) return "r" + std::to_string(*d);
  return "t'" + std::get<std::string>(v) + "'";
}

/// Every row of every table and view of `db` (sqlite_* aside), each row as text with its
/// column names, rows sorted: a table's rows compare equal exactly when their values do.
using Snapshot = std::map<std::string, std::vector<std::string>>;
Snapshot snapshot(results::Db& db) {
  std::vector<std::string> names;
  {
    results::Stmt q(db, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'");
    while (q.step()) names.push_back(q.text(0));
  }
  Snapshot out;
  for (const auto& name : names) {
    auto& rows = out[name];
    results::Stmt q(db, "SELECT * FROM \"" + name + "\"");
    while (q.step()) {
      std::string row;
      for (int c = 0; c < q.columns(); ++c) row += q.column_name(c) + "=" + value_text(q.value(c)) + "|";
      rows.push_back(row);
    }
    std::sort(rows.begin(), rows.end());
  }
  return out;
}

/// (type, name, tbl_name) of every schema object.
std::set<std::tuple<std::string, std::string, std::string>> objects(results::Db& db) {
  std::set<std::tuple<std::string, std::string, std::string>> out;
  results::Stmt q(db, "SELECT type, name, tbl_name FROM sqlite_master");
  while (q.step()) out.emplace(q.text(0), q.text(1), q.text(2));
  return out;
}

std::string schema_version(results::Db& db) {
  results::Stmt q(db, "SELECT value FROM schema_info WHERE key = 'schema_version'");
  return q.step() ? q.text(0) : "none";
}

std::int64_t count(results::Db& db, const std::string& sql) {
  results::Stmt q(db, sql);
  return q.step() ? q.int64(0) : -1;
}

struct ArmRow {
  std::string name, policy, params_json, sha256;
  std::int64_t position;
  bool operator==(const ArmRow&) const = default;
};
std::ostream& operator<<(std::ostream& o, const ArmRow& a) {
  return o << "{" << a.name << ", " << a.policy << ", " << a.params_json << ", " << a.sha256 << ", " << a.position << "}";
}

std::vector<ArmRow> arms(results::Db& db) {
  std::vector<ArmRow> out;
  results::Stmt q(db, "SELECT name, policy, params_json, sha256, position FROM arms ORDER BY position");
  while (q.step()) out.push_back({q.text(0), q.text(1), q.text(2), q.text(3), q.int64(4)});
  return out;
}

/// The arms row of a study arm converted from version 5: canonical JSON written out by hand
/// (keys sorted, no whitespace) and hashed with harness/digest (OpenSSL).
ArmRow study_arm(const std::string& name, const std::string& params, std::int64_t position) {
  const std::string canonical = "{\"name\":\"" + name + "\",\"params\":" + params + ",\"policy\":\"" + name + "\"}";
  return {name, name, params, harness::digest::sha256_hex(canonical), position};
}

const std::vector<ArmRow> kFixtureArms = {study_arm("static-zram", "{}", 0), study_arm("delayed-activation", "{}", 1),
                                          study_arm("bounded-reclaim", "{}", 2)};  // doses 96, 64 and 32 MiB: {}

/// The fixture's snapshot before conversion (read-only, as version 5) and the schema objects.
struct Before {
  Snapshot rows;
  std::set<std::tuple<std::string, std::string, std::string>> objects;
};
Before read_before(const std::string& path) {
  results::Db db(path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(schema_version(db), "5");
  return {snapshot(db), objects(db)};
}

/// Asserts that the file at `path`, opened now, is at version 5 and holds exactly `before`.
void expect_intact_version5(const std::string& path, const Before& before) {
  results::Db db(path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(schema_version(db), "5");
  EXPECT_EQ(objects(db), before.objects);
  EXPECT_EQ(snapshot(db), before.rows);
  EXPECT_EQ(count(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'"), 0);
}

/// Asserts that `db` is the fixture converted: the current version (8), every table and view of
/// `before` with the same rows (cases with engine_kind NULL, telemetry with version 8's columns
/// NULL), the same schema objects plus arms
/// and the version-6 triggers, no CHECK list, foreign keys intact.
void expect_converted(results::Db& db, const Before& before) {
  EXPECT_EQ(schema_version(db), "8");
  Snapshot after = snapshot(db);
  ASSERT_EQ(after.count("arms"), 1u);
  after.erase("arms");
  Snapshot want = before.rows;
  want["schema_info"] = {};
  after["schema_info"] = {};  // the version differs (checked above)
  for (auto& row : want["cases"]) row += "engine_kind=NULL|";  // version 7's column: not recorded before
  for (const char* t : {"telemetry", "telemetry_rows"})  // version 8's columns: not recorded before
    for (auto& row : want[t])
      row += "kswapd_cpu_us=NULL|bg_cpu_usage_us=NULL|bg_cpu_system_us=NULL|fg_cpu_usage_us=NULL|fg_cpu_system_us=NULL|";
  for (const auto& [name, rows] : want) {
    SCOPED_TRACE(name);
    ASSERT_EQ(after.count(name), 1u);
    EXPECT_EQ(after.at(name).size(), rows.size());
    EXPECT_EQ(after.at(name), rows);
  }
  EXPECT_EQ(after.size(), want.size());
  auto objs = before.objects;
  objs.emplace("table", "arms", "arms");
  objs.emplace("index", "sqlite_autoindex_arms_1", "arms");
  for (const char* t : {"cases", "schedule"})
    for (const char* op : {"insert", "update"})
      objs.emplace("trigger", std::string(t) + "_configuration_" + op, t);
  EXPECT_EQ(objects(db), objs);
  EXPECT_EQ(count(db, "SELECT count(*) FROM sqlite_master WHERE sql LIKE '%configuration IN%'"), 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'"), 0);
}

}  // namespace

TEST(SchemaV6, NewFilesHaveAnEmptyArmsTableAndNoListOfNames) {
  test_support::TempDir dir("hk-arms");
  results::Db db(dir / "bundle.db", results::Db::Mode::Create);
  EXPECT_EQ(schema_version(db), "8");
  EXPECT_EQ(count(db, "SELECT count(*) FROM arms"), 0);
  EXPECT_EQ(table_columns(db, "main", "arms"),
            (std::vector<std::string>{"name", "policy", "params_json", "sha256", "position"}));
  // A bundle (arms empty) takes a case of any arm: its spec named it.
  db.exec("INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json) "
          "VALUES ('k', 'c', 'vm0', 'r', 1, 'senpai', 'completed', '{}')");
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE configuration = 'senpai'"), 1);
}

TEST(SchemaV6, AVersionFiveFileIsConvertedKeepingEveryRowAndGetsItsArms) {
  for (auto mode : {results::Db::Mode::ReadWrite, results::Db::Mode::Create}) {
    SCOPED_TRACE(mode == results::Db::Mode::Create ? "Create" : "ReadWrite");
    test_support::TempDir dir("hk-arms");
    const std::string path = dir / "v5.db";
    ASSERT_NO_FATAL_FAILURE(create_v5_file(path));
    const Before before = read_before(path);
    ASSERT_EQ(before.rows.at("cases").size(), 8u);
    ASSERT_EQ(before.rows.at("canary_requests_rows").size(), 1440u);
    {
      results::Db db(path, mode);
      ASSERT_NO_FATAL_FAILURE(expect_converted(db, before));
      EXPECT_EQ(arms(db), kFixtureArms);
      // The views and their triggers work on the new cases: by case id, case keys as they were.
      db.exec("INSERT INTO canary_requests(case_id, canary, seq, scheduled_ns) "
              "VALUES ('fx-vm0-fast-structured-r1-static-zram', 'compute', 500, 1)");
      EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests_rows WHERE seq = 500 AND case_key = 7"), 1);
      EXPECT_THROW(db.exec("INSERT INTO telemetry(case_id, t_ns) VALUES ('nope', 1)"), results::DbError);
      // The tables keyed by case id still reference cases and are checked against it.
      EXPECT_THROW(db.exec("INSERT INTO phases(case_id, phase, start_ns) VALUES ('nope', 'warmup', 0)"),
                   results::DbError);
      // Deleting a case still deletes its rows (ON DELETE CASCADE through the new cases).
      db.exec("DELETE FROM cases WHERE case_id = 'fx-vm0-fast-structured-r2-static-zram'");
      EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests_rows WHERE case_key = 6"), 0);
      EXPECT_EQ(count(db, "SELECT count(*) FROM artifacts WHERE case_id = 'fx-vm0-fast-structured-r2-static-zram'"), 0);
      EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests_rows"), 1441 - 240);
    }
    // Converted once: opened again it is the same.
    results::Db db(path, results::Db::Mode::ReadWrite);
    EXPECT_EQ(schema_version(db), "8");
    EXPECT_EQ(arms(db), kFixtureArms);
  }
}

TEST(SchemaV6, ConvertedArmsTakeTheDoseWhenEveryCaseOfTheArmHasTheSameOneAndComeInStudyOrder) {
  struct Variant {
    const char* what;
    std::string sql;
    std::vector<ArmRow> want;
  };
  const std::string set_dose = "UPDATE cases SET dose_bytes = %D WHERE configuration = 'bounded-reclaim';"
                               "UPDATE schedule SET dose_bytes = %D WHERE configuration = 'bounded-reclaim';";
  auto dose = [&](const std::string& bytes) {
    std::string s = set_dose;
    for (auto at = s.find("%D"); at != std::string::npos; at = s.find("%D")) s.replace(at, 2, bytes);
    return s;
  };
  const std::vector<Variant> variants = {
      {"the fixture: 96, 64 and 32 MiB", "", kFixtureArms},
      {"every case at 96 MiB", dose("100663296"),
       {study_arm("static-zram", "{}", 0), study_arm("delayed-activation", "{}", 1),
        study_arm("bounded-reclaim", "{\"dose_mib\":96}", 2)}},
      {"every case at 1.5 MiB", dose("1572864"),
       {study_arm("static-zram", "{}", 0), study_arm("delayed-activation", "{}", 1),
        study_arm("bounded-reclaim", "{\"dose_mib\":1.5}", 2)}},
      {"one case without its dose", dose("100663296") + "UPDATE schedule SET dose_bytes = NULL WHERE ordinal = 8;",
       kFixtureArms},
      {"no delayed-activation: positions compacted",
       dose("100663296") + "DELETE FROM cases WHERE configuration = 'delayed-activation';"
                           "DELETE FROM schedule WHERE configuration = 'delayed-activation';",
       {study_arm("static-zram", "{}", 0), study_arm("bounded-reclaim", "{\"dose_mib\":96}", 1)}},
      {"bounded-reclaim only (a pilot)",
       "DELETE FROM cases WHERE configuration <> 'bounded-reclaim';"
       "DELETE FROM schedule WHERE configuration <> 'bounded-reclaim';",
       {study_arm("bounded-reclaim", "{}", 0)}},
      {"a delayed-activation case only in the schedule",
       "DELETE FROM cases WHERE configuration = 'delayed-activation';",
       kFixtureArms},
  };
  for (const auto& v : variants) {
    SCOPED_TRACE(v.what);
    test_support::TempDir dir("hk-arms");
    ASSERT_NO_FATAL_FAILURE(create_v5_file(dir / "v5.db", v.sql));
    const Before before = read_before(dir / "v5.db");
    results::Db db(dir / "v5.db", results::Db::Mode::ReadWrite);
    ASSERT_NO_FATAL_FAILURE(expect_converted(db, before));
    EXPECT_EQ(arms(db), v.want);
  }
}

TEST(SchemaV6, AVersionFourFileIsConvertedStraightToVersionSix) {
  test_support::TempDir dir("hk-arms");
  const std::string path = dir / "v4.db";
  ASSERT_NO_FATAL_FAILURE(test_support::create_v4_file(path, false));
  ASSERT_NO_FATAL_FAILURE(test_support::raw_exec(
      path,
      "INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, dose_bytes, status, spec_json) VALUES "
      "('b', 'c', 'vm0', 'r', 1, 'bounded-reclaim', 100663296, 'completed', '{}'),"
      "('s', 'c', 'vm0', 'r', 1, 'static-zram', NULL, 'completed', '{}');"
      "INSERT INTO telemetry(case_id, t_ns, bg_some_us) VALUES ('b', 1, 10), ('s', 1, 20);"));
  results::Db db(path, results::Db::Mode::ReadWrite);
  EXPECT_EQ(schema_version(db), "8");
  EXPECT_EQ(arms(db),
            (std::vector<ArmRow>{study_arm("static-zram", "{}", 0), study_arm("bounded-reclaim", "{\"dose_mib\":96}", 1)}));
  EXPECT_EQ(count(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE '%before_v%'"), 0);
  results::Stmt q(db, "SELECT case_id, bg_some_us FROM telemetry ORDER BY case_id");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.text(0), "b");
  EXPECT_EQ(q.int64(1), 10);
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(1), 20);
}

namespace {

// The test's observer (results::set_conversion_observer): at the step named in g_kill_at, the
// process kills itself (SIGKILL: no destructor, no rollback, as a power cut or kill -9 would
// stop it) or throws. Its first call makes the page cache tiny, so that the conversion's
// uncommitted pages are written to the WAL file before the kill (they must then be ignored).
std::string g_kill_at;
bool g_throw = false;
void kill_at_step(results::Db& db, const char* step) {
  db.exec("PRAGMA cache_size = 2");
  if (g_kill_at != step) return;
  if (g_throw) throw std::runtime_error(std::string("injected failure at ") + step);
  ::kill(::getpid(), SIGKILL);
}

/// Forks a child that opens `path` for writing with the observer set to kill it at `step`;
/// returns how the child ended (waitpid status).
int convert_in_child_killed_at(const std::string& path, const std::string& step) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    g_kill_at = step;
    g_throw = false;
    results::set_conversion_observer(&kill_at_step);
    try {
      results::Db db(path, results::Db::Mode::ReadWrite);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(4);  // converted without reaching the step
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

std::uintmax_t file_size(const std::string& path) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(path, ec);
  return ec ? 0 : n;
}

}  // namespace

TEST(SchemaV6, AConversionKilledPartWayLeavesTheFileAtVersionFiveIntactAndTheNextOpenConvertsIt) {
  for (const char* step : {"renamed", "copied", "filled"}) {
    SCOPED_TRACE(step);
    test_support::TempDir dir("hk-arms");
    const std::string path = dir / "v5.db";
    ASSERT_NO_FATAL_FAILURE(create_v5_file(path));
    const Before before = read_before(path);
    const int status = convert_in_child_killed_at(path, step);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
    // After the first step the killed transaction's pages reached the WAL file, uncommitted
    // (the cache was made tiny at the first step): they must be ignored.
    if (std::string(step) != "renamed") {
      EXPECT_GT(file_size(path + "-wal"), 0u);
    }
    ASSERT_NO_FATAL_FAILURE(expect_intact_version5(path, before));
    results::Db db(path, results::Db::Mode::ReadWrite);
    ASSERT_NO_FATAL_FAILURE(expect_converted(db, before));
    EXPECT_EQ(arms(db), kFixtureArms);
  }
}

TEST(SchemaV6, AVersionFourConversionKilledPartWayLeavesTheFileAtVersionFour) {
  for (const char* step : {"renamed", "copied", "filled"}) {
    SCOPED_TRACE(step);
    test_support::TempDir dir("hk-arms");
    const std::string path = dir / "v4.db";
    ASSERT_NO_FATAL_FAILURE(test_support::create_v4_file(path, false));
    ASSERT_NO_FATAL_FAILURE(test_support::raw_exec(
        path,
        "INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json) VALUES "
        "('s', 'c', 'vm0', 'r', 1, 'static-zram', 'completed', '{}');"
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999) "
        "INSERT INTO canary_requests(case_id, canary, seq, scheduled_ns) SELECT 's', 'compute', i, i FROM n;"));
    Snapshot v4;
    {
      results::Db db(path, results::Db::Mode::ReadOnly);
      v4 = snapshot(db);
    }
    const int status = convert_in_child_killed_at(path, step);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
    {
      results::Db db(path, results::Db::Mode::ReadOnly);
      EXPECT_EQ(schema_version(db), "4");
      EXPECT_EQ(snapshot(db), v4);
    }
    results::Db db(path, results::Db::Mode::ReadWrite);
    EXPECT_EQ(schema_version(db), "8");
    EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests WHERE case_id = 's'"), 1000);
    EXPECT_EQ(arms(db), (std::vector<ArmRow>{study_arm("static-zram", "{}", 0)}));
  }
}

TEST(SchemaV6, AConversionThatFailsPartWayRollsBackAndTheNextOpenConvertsIt) {
  test_support::TempDir dir("hk-arms");
  const std::string path = dir / "v5.db";
  ASSERT_NO_FATAL_FAILURE(create_v5_file(path));
  const Before before = read_before(path);
  g_kill_at = "filled";
  g_throw = true;
  results::set_conversion_observer(&kill_at_step);
  try {
    results::Db db(path, results::Db::Mode::ReadWrite);
    ADD_FAILURE() << "the conversion did not fail";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("injected failure at filled"), std::string::npos) << e.what();
  }
  results::set_conversion_observer(nullptr);
  ASSERT_NO_FATAL_FAILURE(expect_intact_version5(path, before));
  results::Db db(path, results::Db::Mode::ReadWrite);
  ASSERT_NO_FATAL_FAILURE(expect_converted(db, before));
}

TEST(SchemaV6, TheTriggersRefuseAConfigurationThatNamesNoArmAndTakeOneOnceItsArmExists) {
  test_support::TempDir dir("hk-arms");
  ASSERT_NO_FATAL_FAILURE(create_v5_file(dir / "v5.db"));
  results::Db db(dir / "v5.db", results::Db::Mode::ReadWrite);
  const std::string insert_case =
      "INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json) "
      "VALUES ('fx-vm0-fast-structured-r3-senpai', 'fx', 'vm0', 'fast-structured', 3, 'senpai', 'completed', '{}')";
  const std::string insert_schedule =
      "INSERT INTO schedule(case_id, ordinal, vm, regime, repeat, configuration) "
      "VALUES ('fx-vm0-fast-structured-r3-senpai', 11, 'vm0', 'fast-structured', 3, 'senpai')";
  auto refused = [&](const std::string& sql, const std::string& table) {
    try {
      db.exec(sql);
      ADD_FAILURE() << "accepted: " << sql;
    } catch (const results::DbError& e) {
      EXPECT_NE(std::string(e.what()).find(table + ".configuration names no arm of this campaign"), std::string::npos)
          << e.what();
    }
  };
  refused(insert_case, "cases");
  refused(insert_schedule, "schedule");
  refused("UPDATE cases SET configuration = 'senpai' WHERE case_key = 1", "cases");
  refused("UPDATE schedule SET configuration = 'static_zram' WHERE ordinal = 0", "schedule");
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE configuration = 'senpai'"), 0);
  // Once the arm exists, its cases are taken.
  const std::string canonical = R"({"name":"senpai","params":{"interval_s":6},"policy":"senpai"})";
  results::Stmt arm(db, "INSERT INTO arms(name, policy, params_json, sha256, position) VALUES (?1, ?2, ?3, ?4, ?5)");
  arm.bind_all("senpai", "senpai", R"({"interval_s":6})", harness::digest::sha256_hex(canonical), 3).run();
  db.exec(insert_case);
  db.exec(insert_schedule);
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE configuration = 'senpai'"), 1);
  EXPECT_EQ(count(db, "SELECT count(*) FROM schedule WHERE configuration = 'senpai'"), 1);
  db.exec("UPDATE cases SET configuration = 'senpai' WHERE case_key = 1");  // an arm's name: taken
  // Other updates of a case are not checked against arms.
  db.exec("UPDATE cases SET status = 'lost' WHERE configuration = 'senpai'");
}

namespace {

/// Rows of case `id` in every per-case table and view of `db`, by case id (case_key left out).
Snapshot case_rows(results::Db& db, const std::string& id) {
  Snapshot out;
  for (const char* t : {"cases", "phases", "canary_requests", "telemetry", "controller_events", "reclaim_actions",
                        "restoration", "artifacts"}) {
    auto& rows = out[t];
    results::Stmt q(db, std::string("SELECT * FROM ") + t + " WHERE case_id = ?1");
    q.bind(1, id);
    while (q.step()) {
      std::string row;
      for (int c = 0; c < q.columns(); ++c)
        if (q.column_name(c) != "case_key" && q.column_name(c) != "attempt")
          row += q.column_name(c) + "=" + value_text(q.value(c)) + "|";
      rows.push_back(row);
    }
    std::sort(rows.begin(), rows.end());
  }
  return out;
}

}  // namespace

TEST(SchemaV6, VersionFiveBundlesImportIntoAVersionSixCampaignDb) {
  test_support::TempDir dir("hk-arms");
  const std::string bundle = dir / "bundle-v5.db";
  ASSERT_NO_FATAL_FAILURE(create_v5_file(bundle));
  Snapshot want;
  {
    results::Db b(bundle, results::Db::Mode::ReadOnly);
    want = case_rows(b, "fx-vm0-fast-structured-r1-bounded-reclaim");
  }
  ASSERT_EQ(want.at("canary_requests").size(), 240u);
  ASSERT_EQ(want.at("reclaim_actions").size(), 1u);
  for (auto& row : want["cases"]) row += "engine_kind=NULL|";  // version 7's column: the runner writes it, not the bundle
  // Version 8's telemetry columns: a version-5 bundle has none, so they stay NULL.
  for (auto& row : want["telemetry"])
    row += "kswapd_cpu_us=NULL|bg_cpu_usage_us=NULL|bg_cpu_system_us=NULL|fg_cpu_usage_us=NULL|fg_cpu_system_us=NULL|";
  results::Db campaign(dir / "campaign.db", results::Db::Mode::Create);
  for (const auto& a : {study_arm("static-zram", "{}", 0), study_arm("bounded-reclaim", "{\"dose_mib\":96}", 1)}) {
    results::Stmt ins(campaign, "INSERT INTO arms(name, policy, params_json, sha256, position) VALUES (?1, ?2, ?3, ?4, ?5)");
    ins.bind_all(a.name, a.policy, a.params_json, a.sha256, a.position).run();
  }
  EXPECT_EQ(results::import_bundle(campaign, bundle, "fx-vm0-fast-structured-r1-bounded-reclaim"), 240);
  EXPECT_EQ(case_rows(campaign, "fx-vm0-fast-structured-r1-bounded-reclaim"), want);
  // Under another id (the agent's case id), and a second time (replacing its rows).
  EXPECT_EQ(results::import_bundle(campaign, bundle, "k", {}, "fx-vm0-fast-structured-r1-static-zram"), 238 + 2);
  EXPECT_EQ(results::import_bundle(campaign, bundle, "k", {}, "fx-vm0-fast-structured-r1-static-zram"), 240);
  EXPECT_EQ(count(campaign, "SELECT count(*) FROM canary_requests_rows"), 480);
  // A case of an arm the campaign DB does not have is refused, naming the arm; nothing is written.
  try {
    results::import_bundle(campaign, bundle, "fx-vm0-fast-structured-r1-delayed-activation");
    ADD_FAILURE() << "imported a case of an arm that is not in arms";
  } catch (const results::DbError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ran arm 'delayed-activation', which is no arm of"), std::string::npos) << what;
    EXPECT_NE(what.find("(its arms: static-zram, bounded-reclaim)"), std::string::npos) << what;
  }
  EXPECT_EQ(count(campaign, "SELECT count(*) FROM cases"), 2);
  EXPECT_EQ(count(campaign, "SELECT count(*) FROM canary_requests_rows"), 480);
  // The bundle file was not converted or changed by the imports.
  results::Db b(bundle, results::Db::Mode::ReadOnly);
  EXPECT_EQ(schema_version(b), "5");
}
