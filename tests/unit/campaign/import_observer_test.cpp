// The import seam of the campaign DB (campaign_db.hpp set_import_observer): the observer
// runs inside the bundle's import transaction, after every row is written and before the
// commit, so a runner that dies there (takeover_vm_test kills harness-import-pause at that
// point) leaves the case in flight and unimported, never half imported; without an
// observer (the shipped CLI) nothing is called.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "harness/campaign/store/campaign_db.hpp"
#include "tests/common/case_bundle.hpp"

namespace hc = harness::campaign;

namespace {

results::Db* g_db = nullptr;
std::string g_seen;
std::int64_t g_cases_inside = -1;

std::int64_t count(results::Db& db, const std::string& sql) {
  results::Stmt q(db, sql);
  if (!q.step()) return -1;
  return q.int64(0);
}

/// What a killed runner amounts to for the DB: the transaction never commits.
void die_inside_the_import(const std::string& case_id) {
  g_seen = case_id;
  g_cases_inside = count(*g_db, "SELECT count(*) FROM cases WHERE case_id = 'k1'");
  throw std::runtime_error("runner killed");
}

struct ObserverReset {
  ~ObserverReset() { hc::set_import_observer(nullptr); }
};

}  // namespace

TEST(ImportObserver, RunsInsideTheTransactionAndAnAbortThereLeavesTheCaseInFlight) {
  ObserverReset reset;
  const auto dir = std::filesystem::temp_directory_path() / ("hk-import-observer-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  results::Db db((dir / "c.db").string(), results::Db::Mode::Create);
  g_db = &db;
  db.exec("INSERT INTO schedule(case_id, ordinal, vm, regime, repeat, configuration, state) "
          "VALUES ('k1', 0, 'vm0', 'fast-structured', 1, 'static-zram', 'pending')");
  hc::AttemptRecord a;
  a.case_id = "k1";
  a.host = "vm0";
  a.started_unix_ns = 1;
  hc::begin_attempt(db, a);
  const std::string bundle = (dir / "k1.db").string();
  harness::case_::write_bundle(bundle, test_support::completed_bundle("k1", "c", "fast-structured", "static-zram"));

  hc::set_import_observer(&die_inside_the_import);
  EXPECT_THROW(hc::import_attempt(db, bundle, a), std::runtime_error);
  EXPECT_EQ(g_seen, "k1");
  EXPECT_EQ(g_cases_inside, 1) << "the observer must see the rows written, before the commit";
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases"), 0) << "a half import was committed";
  ASSERT_TRUE(hc::inflight_attempt(db, "k1"));
  EXPECT_EQ(hc::case_progress(db, "k1").state, hc::kPendingState);

  hc::set_import_observer(nullptr);
  EXPECT_EQ(hc::import_attempt(db, bundle, a), "completed");
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases"), 1);
  EXPECT_FALSE(hc::inflight_attempt(db, "k1"));
  EXPECT_EQ(hc::case_progress(db, "k1").state, "completed");
  g_db = nullptr;
  std::filesystem::remove_all(dir);
}
