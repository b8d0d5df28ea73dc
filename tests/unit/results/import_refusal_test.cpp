// results::import_bundle refuses a bundle that is missing, is not a results database, or does
// not hold the case, with a DbError naming the bundle file; nothing is written, a missing file
// is not created, and the campaign connection imports the next bundle as usual (the refused
// one is detached, foreign keys enforced again).
#include "results/db.hpp"
#include "tests/common/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace {

void write_bundle(const std::string& path, const std::string& id) {
  results::Db b(path, results::Db::Mode::Create);
  b.exec("INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json) VALUES ('" + id +
         "', 'c', 'vm0', 'fast-structured', 1, 'static-zram', 'completed', '{}')");
  b.exec("INSERT INTO canary_requests(case_id, canary, seq, scheduled_ns) VALUES ('" + id + "', 'compute', 0, 0)");
}

std::int64_t count(results::Db& db, const std::string& sql) {
  results::Stmt q(db, sql);
  return q.step() ? q.int64(0) : -1;
}

struct ImportRefusal : ::testing::Test {
  test_support::TempDir dir{"hk-import-refusal"};
  std::string path(const std::string& name) const { return dir / name; }

  /// The refusal's message; then the same connection imports a good bundle.
  std::string refused_then_good(results::Db& db, const std::string& bundle, const std::string& from) {
    std::string what;
    try {
      results::import_bundle(db, bundle, "case-1", {}, from);
      ADD_FAILURE() << "no refusal for " << bundle;
    } catch (const results::DbError& e) {
      what = e.what();
    }
    EXPECT_EQ(count(db, "SELECT count(*) FROM cases"), 0);
    write_bundle(path("good.db"), "agent-2");
    EXPECT_EQ(results::import_bundle(db, path("good.db"), "case-2", {}, "agent-2"), 1);
    EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests WHERE case_id = 'case-2'"), 1);
    EXPECT_EQ(count(db, "PRAGMA foreign_keys"), 1);
    return what;
  }
};

}  // namespace

TEST_F(ImportRefusal, MissingFileIsRefusedAndNotCreated) {
  results::Db db(path("campaign.db"), results::Db::Mode::Create);
  EXPECT_THAT(refused_then_good(db, path("missing.db"), "agent-1"), HasSubstr("missing.db: no such database file"));
  EXPECT_FALSE(fs::exists(path("missing.db")));
}

TEST_F(ImportRefusal, FileThatIsNotADatabaseIsRefused) {
  results::Db db(path("campaign.db"), results::Db::Mode::Create);
  std::ofstream(path("junk.db")) << std::string(8192, 'x');
  EXPECT_THAT(refused_then_good(db, path("junk.db"), "agent-1"), HasSubstr("junk.db: "));
}

TEST_F(ImportRefusal, DatabaseWithoutTheResultsSchemaIsRefused) {
  results::Db db(path("campaign.db"), results::Db::Mode::Create);
  {
    results::Db other(path("other.db"), results::Db::Mode::Create);
    other.exec("DROP TABLE schema_info");
  }
  EXPECT_THAT(refused_then_good(db, path("other.db"), "agent-1"),
              HasSubstr("other.db: not a harness results database"));
}

TEST_F(ImportRefusal, BundleWithoutTheCaseIsRefused) {
  results::Db db(path("campaign.db"), results::Db::Mode::Create);
  write_bundle(path("b.db"), "agent-1");
  EXPECT_THAT(refused_then_good(db, path("b.db"), "agent-9"), HasSubstr("b.db: bundle holds no case 'agent-9'"));
}
