// `harness check tests/vm/campaign/ab-short.yaml DB --until-decided --max-pairs 2` on local qemu
// guests (docs/CI.md "Deciding with more pairs"), with one assertion no case can meet
// (reclaim_achieved_ratio >= 100; assertions are not part of the plan), so the verdict is known
// before a case runs and does not depend on the guests' noise:
//   1st: the plan holds every pair up to the cap (2 pairs = 4 cases, schedule JSON
//        "sequential.max_pairs" 2), look 1 runs the first pair only (2 attempts, both cases
//        completed, repeat 2 left pending), the failed assertion decides at look 1: exit 1, no
//        look 2, the JUnit names the assertion as its one <failure>;
//   2nd: the same command with --reuse judges the same cases the same way, with no new attempt.
// The statistics of the looks are tested in tests/unit/analysis/test_sequential.cpp; every look
// path against a fake agent in tests/unit/check/check_sequential_test.cpp. This is the real
// runner's skip list and the real agent under the looks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "results/db.hpp"
#include "tests/common/campaign_vm.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace {
std::int64_t count(const std::string& db_path, const std::string& sql) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  results::Stmt q(db, sql);
  return q.step() ? q.int64(0) : -1;
}
std::string meta(const std::string& db_path, const std::string& key) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  results::Stmt q(db, "SELECT value FROM campaign_meta WHERE key = ?1");
  q.bind(1, key);
  return q.step() ? q.text(0) : "";
}
}  // namespace

TEST(CheckSequentialVm, AFailedAssertionDecidesAtTheFirstLookAndTheLaterPairsNeverRun) {
  const test_support::CampaignVm vm("sequential");
  const std::string db = vm.dir + "/seq.db", xml = vm.dir + "/seq.xml";
  const std::string file = vm.dir + "/ab-short-impossible.yaml";
  std::string yaml = test_support::slurp(std::string(HARNESS_SOURCE_DIR) + "/tests/vm/campaign/ab-short.yaml");
  const std::string last = "  - kind: restoration_clean\n";
  ASSERT_NE(yaml.find(last), std::string::npos) << "ab-short.yaml's assertions changed";
  yaml.insert(yaml.find(last) + last.size(), "  - {kind: reclaim_achieved_ratio, min: 100}\n");
  std::ofstream(file) << yaml;
  const auto image = vm.harness("vm image");
  ASSERT_EQ(image.code, 0) << image.out;

  const std::string args = "check " + file + " " + db + " --until-decided --max-pairs 2 --junit " + xml + " --plain";
  const auto run = vm.run_then_down(args);
  EXPECT_EQ(run.code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("until decided: at most 2 pair(s), judged after 2 look(s) at 1, 2 pairs")) << run.out;
  EXPECT_THAT(run.out, HasSubstr("look 1 of 2: up to 1 pair(s)"));
  EXPECT_THAT(run.out, Not(HasSubstr("look 2 of 2")));
  EXPECT_THAT(run.out, HasSubstr("FAIL  reclaim_achieved_ratio >= 100"));
  EXPECT_EQ(count(db, "SELECT count(*) FROM schedule"), 4) << "the plan holds every pair up to the cap";
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 2) << run.out;
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE status = 'completed'"), 2) << run.out;
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts WHERE case_id LIKE '%-r2-%'"), 0) << "a pair of look 2 ran";
  EXPECT_EQ(count(db, "SELECT count(*) FROM schedule WHERE state = 'pending' AND case_id LIKE '%-r2-%'"), 2);
  const auto plan = nlohmann::json::parse(meta(db, "schedule_json"), nullptr, false);
  ASSERT_TRUE(plan.is_object()) << meta(db, "schedule_json").substr(0, 200);
  EXPECT_EQ(plan["sequential"]["max_pairs"], 2) << plan["sequential"].dump();
  const std::string junit = test_support::slurp(xml);
  EXPECT_THAT(junit, HasSubstr("failures=\"1\"")) << junit;
  EXPECT_THAT(junit, HasSubstr("name=\"reclaim_achieved_ratio &gt;= 100\"")) << junit;

  const auto again = vm.run_then_down(args + " --reuse");
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_THAT(again.out, HasSubstr("0 attempt(s) in this run")) << again.out;
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 2);
  EXPECT_THAT(test_support::slurp(xml), HasSubstr("failures=\"1\""));
  if (!HasFailure()) std::filesystem::remove_all(vm.dir);
}
