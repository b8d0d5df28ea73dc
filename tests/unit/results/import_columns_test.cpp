// results::import_bundle copies the columns the bundle and the campaign DB both have, by name
// (a bundle of another schema version: the columns it lacks stay NULL,
// the ones the campaign DB lacks are left out), and returns the number of canary_requests rows
// of the case, the same on a re-import that replaces the earlier rows.
#include "results/db.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>

namespace fs = std::filesystem;

namespace {

struct ImportColumns : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("hk-import-columns-" + std::to_string(::getpid()));
  std::string bundle_path, campaign_path;

  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir);
    bundle_path = (dir / "bundle.db").string();
    campaign_path = (dir / "campaign.db").string();
    results::Db b(bundle_path, results::Db::Mode::Create);
    // Another schema version: canary_requests_rows without nivcsw, with a column the campaign
    // DB does not know, added last. The view goes first (it names nivcsw; its triggers go with
    // it): an import reads the rows table, and the rows are written there directly.
    b.exec("DROP VIEW canary_requests");
    b.exec("ALTER TABLE canary_requests_rows DROP COLUMN nivcsw");
    b.exec("ALTER TABLE canary_requests_rows ADD COLUMN from_the_future INTEGER");
    b.exec("INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json) "
           "VALUES ('k.a1-x', 'c', 'vm0', 'fast-structured', 1, 'static-zram', 'completed', '{}')");
    b.exec("INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json) "
           "VALUES ('other', 'c', 'vm0', 'fast-structured', 2, 'static-zram', 'completed', '{}')");
    for (int i = 0; i < 3; ++i)
      b.exec("INSERT INTO canary_requests_rows(case_key, canary, seq, scheduled_ns, wake_ns, completion_ns, minflt, "
             "majflt, nvcsw, from_the_future) VALUES ((SELECT case_key FROM cases WHERE case_id = 'k.a1-x'), "
             "'compute', " + std::to_string(i) + ", " +
             std::to_string(100 + i) + ", " + std::to_string(110 + i) + ", " + std::to_string(120 + i) +
             ", 3, 4, 5, 99)");
    b.exec("INSERT INTO canary_requests_rows(case_key, canary, seq, scheduled_ns, nvcsw) VALUES "
           "((SELECT case_key FROM cases WHERE case_id = 'other'), 'sqlite', 0, 1, 1)");
    b.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  void TearDown() override { fs::remove_all(dir); }
};

std::int64_t count(results::Db& db, const std::string& sql) {
  results::Stmt q(db, sql);
  return q.step() ? q.int64(0) : -1;
}

TEST_F(ImportColumns, SharedColumnsAreCopiedAndTheOthersStayNull) {
  results::Db db(campaign_path, results::Db::Mode::Create);
  EXPECT_EQ(results::import_bundle(db, bundle_path, "k", {}, "k.a1-x"), 3);
  results::Stmt q(db,
                  "SELECT canary, seq, scheduled_ns, wake_ns, completion_ns, minflt, majflt, nvcsw, nivcsw "
                  "FROM canary_requests WHERE case_id = 'k' ORDER BY seq");
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(q.step()) << "row " << i;
    EXPECT_EQ(q.text(0), "compute");
    EXPECT_EQ(q.int64(1), i);
    EXPECT_EQ(q.int64(2), 100 + i);
    EXPECT_EQ(q.int64(3), 110 + i);
    EXPECT_EQ(q.int64(4), 120 + i);
    EXPECT_EQ(q.int64(5), 3);
    EXPECT_EQ(q.int64(6), 4);
    EXPECT_EQ(q.int64(7), 5);
    EXPECT_EQ(q.opt_int64(8), std::nullopt) << "a column the bundle lacks must stay NULL";
  }
  EXPECT_FALSE(q.step());
  EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests WHERE case_id <> 'k'"), 0)
      << "rows of another case in the bundle were imported";
}

TEST_F(ImportColumns, AReimportReplacesTheRowsAndCountsOnlyTheNewOnes) {
  results::Db db(campaign_path, results::Db::Mode::Create);
  ASSERT_EQ(results::import_bundle(db, bundle_path, "k", {}, "k.a1-x"), 3);
  EXPECT_EQ(results::import_bundle(db, bundle_path, "k", {}, "k.a1-x"), 3);
  EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests WHERE case_id = 'k'"), 3);
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases"), 1);
}

}  // namespace
