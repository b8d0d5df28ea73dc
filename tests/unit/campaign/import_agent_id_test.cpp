// A bundle holds its case under the id the attempt was submitted to the agent as
// (campaign_db.hpp agent_case_id: "<case>.a<attempt>-<tag>"); import_attempt with that
// bundle_case_id writes every row under the scheduled case id, reading the bundle as it is
// (the file is not modified), and a bundle without that id is refused naming the file and the
// id it looked for.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "harness/campaign/store/campaign_db.hpp"
#include "tests/common/case_bundle.hpp"

namespace hc = harness::campaign;
namespace fs = std::filesystem;

namespace {

std::int64_t count(results::Db& db, const std::string& sql) {
  results::Stmt q(db, sql);
  return q.step() ? q.int64(0) : -1;
}

struct Fixture : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("hk-import-agent-id-" + std::to_string(::getpid()));
  std::string bundle;
  const std::string agent_id = "k1.a2-0123abcd";
  hc::AttemptRecord a;

  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir);
    bundle = (dir / "k1.a2.db").string();
    auto b = test_support::completed_bundle(agent_id, "c", "fast-structured", "static-zram");
    b.phases = {{"warmup", 10, 20}, {"pressure", 20, 30}};
    for (int i = 0; i < 3; ++i) b.requests.push_back({"compute", i, 100 + i, 110 + i, 120 + i, 0, 0, 1, 0});
    b.requests.push_back({"sqlite", 0, 100, 105, 130, 0, 0, 1, 0});
    harness::case_::TelemetrySample t;
    t.t_ns = 15;
    t.phase = "warmup";
    b.telemetry.push_back(t);
    b.events.push_back({25, "window", 1000, 10, 1, 1, nullptr});
    b.artifacts.emplace_back("executor.log", "ok\n");
    harness::case_::write_bundle(bundle, b);
    a.case_id = "k1";
    a.attempt = 2;
    a.host = "vm0";
    a.started_unix_ns = 1;
  }
  void TearDown() override { fs::remove_all(dir); }

  void schedule(results::Db& db) {
    db.exec("INSERT INTO schedule(case_id, ordinal, vm, regime, repeat, configuration, state) "
            "VALUES ('k1', 0, 'vm0', 'fast-structured', 1, 'static-zram', 'pending')");
    hc::begin_attempt(db, a);
  }
};

}  // namespace

TEST_F(Fixture, EveryRowIsImportedUnderTheScheduledIdAndTheBundleIsLeftAsItWas) {
  results::Db db((dir / "c.db").string(), results::Db::Mode::Create);
  schedule(db);
  ASSERT_EQ(hc::import_attempt(db, bundle, a, {}, agent_id), "completed");

  EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE case_id = 'k1' AND attempt = 2"), 1);
  EXPECT_EQ(count(db, "SELECT count(*) FROM phases WHERE case_id = 'k1'"), 2);
  EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests WHERE case_id = 'k1'"), 4);
  EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests WHERE case_id = 'k1' AND canary = 'compute' "
                      "AND seq = 2 AND completion_ns = 122"),
            1)
      << "the other columns must be copied as they were";
  EXPECT_EQ(count(db, "SELECT count(*) FROM telemetry WHERE case_id = 'k1'"), 1);
  EXPECT_EQ(count(db, "SELECT count(*) FROM controller_events WHERE case_id = 'k1'"), 1);
  EXPECT_EQ(count(db, "SELECT count(*) FROM artifacts WHERE case_id = 'k1'"), 1);
  for (const char* t : {"cases", "phases", "canary_requests", "telemetry", "controller_events", "artifacts"})
    EXPECT_EQ(count(db, std::string("SELECT count(*) FROM ") + t + " WHERE case_id <> 'k1'"), 0) << t;
  EXPECT_EQ(hc::case_progress(db, "k1").state, "completed");

  results::Db b(bundle, results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(b, "SELECT count(*) FROM canary_requests WHERE case_id = '" + agent_id + "'"), 4)
      << "the bundle file was modified";
  EXPECT_EQ(count(b, "SELECT count(*) FROM cases WHERE case_id = 'k1'"), 0);
}

TEST_F(Fixture, ABundleWithoutThatIdIsRefusedNamingTheFileAndTheId) {
  results::Db db((dir / "c.db").string(), results::Db::Mode::Create);
  schedule(db);
  try {
    hc::import_attempt(db, bundle, a, {}, "k1.a2-ffffffff");
    FAIL() << "imported a bundle that holds another agent case id";
  } catch (const results::DbError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(bundle));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("no case 'k1.a2-ffffffff'"));
  }
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases"), 0);
  EXPECT_TRUE(hc::inflight_attempt(db, "k1")) << "a refused import must leave the attempt in flight";
}
