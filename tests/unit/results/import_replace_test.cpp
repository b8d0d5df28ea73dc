// results::import_bundle replaces an earlier attempt's rows of the case in every per-case table
// (none of them left behind, rows of other cases untouched), and the campaign connection
// enforces foreign keys again afterwards, also after an import that threw.
#include "results/db.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>

namespace fs = std::filesystem;

namespace {

const char* const kChildTables[] = {"phases",          "canary_requests", "telemetry", "controller_events",
                                    "reclaim_actions", "restoration",     "artifacts"};

/// A bundle at `path` holding case `id` with `n` rows in each per-case table (restoration: 1).
void write_bundle(const std::string& path, const std::string& id, int n) {
  results::Db b(path, results::Db::Mode::Create);
  const std::string q = "'" + id + "'";
  b.exec("INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json) VALUES (" + q +
         ", 'c', 'vm0', 'fast-structured', 1, 'static-zram', 'completed', '{}')");
  static const char* const kPhases[] = {"warmup", "pressure", "recovery", "restoration"};
  for (int i = 0; i < n; ++i) {
    const std::string v = std::to_string(i);
    b.exec("INSERT INTO phases(case_id, phase, start_ns) VALUES (" + q + ", '" + kPhases[i % 4] + "', " + v + ")");
    b.exec("INSERT INTO canary_requests(case_id, canary, seq, scheduled_ns) VALUES (" + q + ", 'compute', " + v +
           ", " + v + ")");
    b.exec("INSERT INTO telemetry(case_id, t_ns) VALUES (" + q + ", " + v + ")");
    b.exec("INSERT INTO controller_events(case_id, t_ns, kind) VALUES (" + q + ", " + v + ", 'window')");
    b.exec("INSERT INTO reclaim_actions(case_id, requested_bytes, start_ns, end_ns, duration_ns, write_errno) "
           "VALUES (" + q + ", 1, " + v + ", " + v + ", 0, 0)");
    b.exec("INSERT INTO artifacts(case_id, name, content) VALUES (" + q + ", 'a" + v + "', 'x')");
  }
  b.exec("INSERT INTO restoration(case_id, start_ns, end_ns, clean) VALUES (" + q + ", 1, 2, 1)");
  b.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

std::int64_t count(results::Db& db, const std::string& sql) {
  results::Stmt q(db, sql);
  return q.step() ? q.int64(0) : -1;
}

bool foreign_keys_enforced(results::Db& db) {
  try {
    db.exec("INSERT INTO phases(case_id, phase, start_ns) VALUES ('no-such-case', 'warmup', 0)");
  } catch (const results::DbError&) {
    return true;
  }
  db.exec("DELETE FROM phases WHERE case_id = 'no-such-case'");
  return false;
}

struct ImportReplace : ::testing::Test {
  test_support::TempDir dir{"hk-import-replace"};
  std::string path(const std::string& name) const { return dir / name; }
};

}  // namespace

/// import_bundle deletes an earlier attempt's child rows table by table (foreign keys are off
/// during its copy, so nothing cascades): every table of the schema that references cases (by
/// case_id, or by case_key: the rows tables behind the views canary_requests, telemetry and
/// controller_events) must be one this file fills and checks, so that a new one fails here first.
TEST_F(ImportReplace, ChildTablesAreEveryTableThatReferencesCases) {
  results::Db db(path("campaign.db"), results::Db::Mode::Create);
  std::set<std::string> referencing;
  results::Stmt q(db, "SELECT m.name FROM sqlite_master m, pragma_foreign_key_list(m.name) f "
                      "WHERE m.type = 'table' AND f.\"table\" = 'cases'");
  while (q.step()) referencing.insert(q.text(0));
  std::set<std::string> checked;
  for (const char* t : kChildTables) {
    results::Stmt v(db, "SELECT type FROM sqlite_master WHERE name = ?1");
    v.bind(1, t);
    ASSERT_TRUE(v.step()) << t;
    checked.insert(v.text(0) == "view" ? std::string(t) + "_rows" : std::string(t));
  }
  EXPECT_EQ(referencing, checked);
}

TEST_F(ImportReplace, AReimportLeavesOnlyTheNewAttemptsRowsInEveryTable) {
  results::Db db(path("campaign.db"), results::Db::Mode::Create);
  write_bundle(path("first.db"), "k.a1-x", 4);
  write_bundle(path("second.db"), "k.a2-x", 2);
  write_bundle(path("other.db"), "j.a1-x", 3);
  results::import_bundle(db, path("other.db"), "j", {}, "j.a1-x");
  results::import_bundle(db, path("first.db"), "k", {}, "k.a1-x");
  for (const char* t : kChildTables)
    ASSERT_EQ(count(db, std::string("SELECT count(*) FROM ") + t + " WHERE case_id = 'k'"),
              std::string(t) == "restoration" ? 1 : 4)
        << t;
  results::import_bundle(db, path("second.db"), "k", {}, "k.a2-x");
  for (const char* t : kChildTables) {
    EXPECT_EQ(count(db, std::string("SELECT count(*) FROM ") + t + " WHERE case_id = 'k'"),
              std::string(t) == "restoration" ? 1 : 2)
        << t << ": rows of the earlier attempt left behind";
    EXPECT_EQ(count(db, std::string("SELECT count(*) FROM ") + t + " WHERE case_id = 'j'"),
              std::string(t) == "restoration" ? 1 : 3)
        << t << ": rows of another case touched";
  }
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases"), 2);
  EXPECT_TRUE(foreign_keys_enforced(db));
}

TEST_F(ImportReplace, ForeignKeysAreEnforcedAgainAfterAnImportThatThrew) {
  results::Db db(path("campaign.db"), results::Db::Mode::Create);
  write_bundle(path("first.db"), "k.a1-x", 2);
  EXPECT_THROW(results::import_bundle(
                   db, path("first.db"), "k", [](results::Db&) { throw std::runtime_error("abort"); }, "k.a1-x"),
               std::runtime_error);
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases"), 0) << "an import that threw must commit nothing";
  EXPECT_TRUE(foreign_keys_enforced(db));
}
