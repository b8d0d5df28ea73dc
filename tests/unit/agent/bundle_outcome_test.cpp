// What a finished executor left (harness/agent/cases/bundle_outcome.hpp), over bundles the test writes.
#include "harness/agent/cases/bundle_outcome.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/unit/agent/test_bundle.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace {
using namespace harness::agent;
using agent_test::write_bundle;

TEST(BundleOutcome, NoBundleIsInfraFailedWithoutAVerdict) {
  test_support::TempDir tmp("bundle");
  const BundleOutcome o = read_bundle("c", tmp / "c.db", 3);
  EXPECT_EQ(o.state, CaseState::InfraFailed);
  EXPECT_NE(o.error.find("exited with code 3 without writing a bundle"), std::string::npos) << o.error;
  EXPECT_TRUE(o.unclean);
  EXPECT_TRUE(o.restoration["clean"].is_null());
  EXPECT_FALSE(o.restoration.contains("ran"));
  EXPECT_NE(o.problems[0].get<std::string>().find("VM's state is unknown"), std::string::npos);
}

TEST(BundleOutcome, CleanCompletedAndLostBundles) {
  test_support::TempDir tmp("bundle");
  write_bundle(tmp / "c.db", "c", "completed", true);
  BundleOutcome o = read_bundle("c", tmp / "c.db", 0);
  EXPECT_EQ(o.state, CaseState::Completed);
  EXPECT_FALSE(o.unclean);
  EXPECT_EQ(o.restoration["clean"], true);
  EXPECT_EQ(o.restoration["ran"], true);
  write_bundle(tmp / "l.db", "l", "lost", true);
  EXPECT_EQ(read_bundle("l", tmp / "l.db", 0).state, CaseState::Lost);
}

TEST(BundleOutcome, NoRestorationRowMeansNothingWasSetUp) {
  test_support::TempDir tmp("bundle");
  write_bundle(tmp / "c.db", "c", "infra_failed");
  const BundleOutcome o = read_bundle("c", tmp / "c.db", 1);
  EXPECT_EQ(o.state, CaseState::InfraFailed);
  EXPECT_FALSE(o.unclean);
  EXPECT_EQ(o.restoration["ran"], false);
  EXPECT_TRUE(o.restoration["clean"].is_null());
}

TEST(BundleOutcome, UncleanRestorationCarriesItsProblems) {
  test_support::TempDir tmp("bundle");
  write_bundle(tmp / "c.db", "c", "completed", false, {"zram device /dev/zram1 still active"});
  BundleOutcome o = read_bundle("c", tmp / "c.db", 0);
  EXPECT_EQ(o.state, CaseState::Completed) << "the case keeps its outcome";
  EXPECT_TRUE(o.unclean);
  EXPECT_EQ(o.problems, nlohmann::json::array({"zram device /dev/zram1 still active"}));
  EXPECT_EQ(o.restoration["clean"], false);
  write_bundle(tmp / "d.db", "d", "completed", false);
  o = read_bundle("d", tmp / "d.db", 0);
  EXPECT_EQ(o.problems, nlohmann::json::array({"restoration.clean = 0 (no problems listed)"}));
}

TEST(BundleOutcome, AnotherCasesBundleOrGarbageHasNoVerdictForThisCase) {
  test_support::TempDir tmp("bundle");
  write_bundle(tmp / "c.db", "other", "completed", true);
  BundleOutcome o = read_bundle("c", tmp / "c.db", 0);
  EXPECT_EQ(o.state, CaseState::InfraFailed);
  EXPECT_NE(o.error.find("has no row for this case"), std::string::npos) << o.error;
  { std::ofstream(tmp / "g.db") << "not a database, just text that is long enough to be read as a header"; }
  o = read_bundle("g", tmp / "g.db", 0);
  EXPECT_EQ(o.state, CaseState::InfraFailed);
  EXPECT_NE(o.error.find("bundle unreadable: "), std::string::npos) << o.error;
  EXPECT_TRUE(o.unclean);
}

}  // namespace
