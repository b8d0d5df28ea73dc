// The CI path of docs/CI.md on local qemu guests: `harness check tests/vm/campaign/ab-short.yaml DB
// --junit F --markdown F` (one A/B pair of bounded-reclaim cases), then `harness check ... DB2
// --baseline-db DB` (only the candidate case runs again):
//   - both checks exit 0 (built to pass); the JUnit holds one testcase per assertion and per
//     metric and the environment testcase (both variants' recorded environment), no
//     <failure>; the Markdown summary's metric and assertion tables hold the
//     expected cells (pairs 1, the tolerance, verdict ok / reported, assertions pass);
//   - the --baseline-db run makes one attempt (the candidate), leaves the baseline pending and
//     names the stored baseline in its summary;
//   - both cases of the first run complete; the candidate's guest was booted with the
//     variant's kernel parameter (environment cmdline) and its knobs were written, read back
//     (outcome_json.variant, and qualification's independent reading) and restored; the
//     baseline's guest has neither the parameter nor the knobs.
#include "results/db.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "tests/common/campaign_vm.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace {
std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}
/// The Markdown table row whose first cell is `first` ("" when absent).
std::string md_row(const std::string& md, const std::string& first) {
  const auto at = md.find("\n| " + first + " |");
  if (at == std::string::npos) return "";
  return md.substr(at + 1, md.find('\n', at + 1) - at - 1);
}
}  // namespace

TEST(AbCampaignVm, ReadmeCiPathJudgesThePairAndTheCandidateVariantIsBootedAppliedReadBackAndRestored) {
  const test_support::CampaignVm vm("ab");
  const std::string db_path = vm.dir + "/ab.db", db2 = vm.dir + "/ab-candidate.db";
  const std::string file = std::string(HARNESS_SOURCE_DIR) + "/tests/vm/campaign/ab-short.yaml";
  const auto image = vm.harness("vm image");
  ASSERT_EQ(image.code, 0) << image.out;
  const auto run = vm.run_then_down("check " + file + " " + db_path + " --junit " + vm.dir + "/ab.xml --markdown " +
                                    vm.dir + "/ab.md --plain");
  EXPECT_EQ(run.code, 0) << run.out;

  // JUnit: 2 assertions + 10 metrics + the environment testcase, none failed.
  const std::string junit = test_support::slurp(vm.dir + "/ab.xml");
  EXPECT_THAT(junit, HasSubstr("<testsuite name=\"ab-short\" tests=\"13\" failures=\"0\"")) << junit;
  EXPECT_EQ(occurrences(junit, "<testcase "), 13u);
  EXPECT_THAT(junit, HasSubstr("<testcase classname=\"ab-short.environment\" name=\"baseline and candidate environment\">"));
  EXPECT_THAT(junit, Not(HasSubstr("<failure")));
  EXPECT_THAT(junit, HasSubstr("<testcase classname=\"ab-short\" name=\"all_cases_completed\">"));
  EXPECT_THAT(junit, HasSubstr("<testcase classname=\"ab-short.regression\" name=\"reclaim_duration\">"));
  EXPECT_THAT(junit, HasSubstr("<property name=\"pairs\" value=\"1\"/>"));
  // Markdown: the verdict line, the metric table and the assertion table.
  const std::string md = test_support::slurp(vm.dir + "/ab.md");
  EXPECT_THAT(md, HasSubstr("**PASS**: 0 regression(s) in 10 metric(s), 0 of 2 assertion(s) failed")) << md;
  EXPECT_THAT(md, HasSubstr("| metric | unit | pairs | baseline | candidate | ratio | interval | change | tolerance | verdict |"));
  const std::string rd = md_row(md, "reclaim_duration");
  EXPECT_THAT(rd, ::testing::MatchesRegex(R"(\| reclaim_duration \| s \| 1 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| \[[0-9.]+, [0-9.]+\] \| [a-z ]+ \| at most 100 \| ok \|)"))
      << md;
  EXPECT_THAT(md_row(md, "compute_p99"), HasSubstr("| reported |")) << md;
  EXPECT_THAT(md_row(md, "all_cases_completed"), HasSubstr("| 2 | pass |")) << md;
  EXPECT_THAT(md_row(md, "restoration_clean"), HasSubstr("| 2 | pass |")) << md;
  EXPECT_THAT(md, HasSubstr("Baseline cases: this run's DB"));

  // Once more against the stored baseline: only the candidate runs.
  const auto again = vm.run_then_down("check " + file + " " + db2 + " --baseline-db " + db_path + " --junit " + vm.dir +
                                      "/ab2.xml --markdown " + vm.dir + "/ab2.md --plain");
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_THAT(again.out, HasSubstr("1 baseline case(s) of this plan not run"));
  {
    results::Db d2(db2, results::Db::Mode::ReadOnly);
    results::Stmt a(d2, "SELECT count(*), min(case_id) FROM attempts");
    ASSERT_TRUE(a.step());
    EXPECT_EQ(a.int64(0), 1) << "the --baseline-db run ran more than the candidate";
    EXPECT_EQ(a.text(1), "ab-short-vm0-fast-random-r1-bounded-reclaim-candidate");
    results::Stmt p(d2, "SELECT state FROM schedule WHERE case_id = 'ab-short-vm0-fast-random-r1-bounded-reclaim-baseline'");
    ASSERT_TRUE(p.step());
    EXPECT_EQ(p.text(0), "pending");
  }
  const std::string junit2 = test_support::slurp(vm.dir + "/ab2.xml");
  EXPECT_THAT(junit2, HasSubstr("<testsuite name=\"ab-short\" tests=\"13\" failures=\"0\"")) << junit2;
  const std::string md2 = test_support::slurp(vm.dir + "/ab2.md");
  EXPECT_THAT(md2, HasSubstr("**PASS**")) << md2;
  EXPECT_THAT(md2, HasSubstr("stored baseline `" + db_path + "`")) << md2;
  EXPECT_THAT(md_row(md2, "reclaim_duration"), HasSubstr("| 1 |")) << md2;
  EXPECT_THAT(md_row(md2, "all_cases_completed"), HasSubstr("| 1 | pass |")) << md2;

  results::Db db(db_path, results::Db::Mode::ReadOnly);
  results::Stmt q(db,
                  "SELECT case_id, status, spec_json, outcome_json, environment_json, qualification_json FROM cases "
                  "ORDER BY case_id");
  nlohmann::json base, cand;
  int n = 0;
  while (q.step()) {
    ++n;
    EXPECT_EQ(q.text(1), "completed") << q.text(0);
    nlohmann::json row{{"id", q.text(0)},
                       {"spec", nlohmann::json::parse(q.text(2))},
                       {"outcome", nlohmann::json::parse(q.text(3))},
                       {"env", nlohmann::json::parse(q.text(4))},
                       {"qual", nlohmann::json::parse(q.text(5))}};
    (row["spec"]["variant"]["name"] == "candidate" ? cand : base) = row;
  }
  ASSERT_EQ(n, 2);
  ASSERT_FALSE(base.is_null());
  ASSERT_FALSE(cand.is_null());
  EXPECT_EQ(base["id"], "ab-short-vm0-fast-random-r1-bounded-reclaim-baseline");
  EXPECT_EQ(cand["id"], "ab-short-vm0-fast-random-r1-bounded-reclaim-candidate");
  EXPECT_EQ(base["spec"]["variant"]["pair_id"], cand["spec"]["variant"]["pair_id"]);
  EXPECT_EQ(base["spec"]["pressure"]["seed"], cand["spec"]["pressure"]["seed"]);

  // The candidate's guest was booted with its kernel parameter; the baseline's was not.
  EXPECT_THAT(cand["env"]["cmdline"].get<std::string>(), HasSubstr("harness.abtest=1"));
  EXPECT_THAT(base["env"]["cmdline"].get<std::string>(), Not(HasSubstr("harness.abtest=1")));
  const auto& v = cand["outcome"]["variant"];
  EXPECT_EQ(v["boot"]["cmdline"]["harness.abtest=1"], true) << v.dump();

  // Written, read back, restored.
  const auto& sw = v["settings"]["vm.swappiness"];
  EXPECT_EQ(sw["written"], "200") << v.dump();
  EXPECT_EQ(sw["readback"], "200") << v.dump();
  EXPECT_EQ(sw["matches"], true);
  EXPECT_NE(sw["before"], "200");
  EXPECT_EQ(sw["restore"]["ok"], true) << v.dump();
  EXPECT_EQ(sw["restore"]["readback"], sw["before"]);
  const auto& lg = v["settings"]["/sys/kernel/mm/lru_gen/enabled"];
  EXPECT_EQ(lg["written"], "y") << v.dump();
  ASSERT_TRUE(lg["readback"].is_string()) << v.dump();
  EXPECT_NE(lg["readback"], lg["before"]) << "MGLRU not switched on: " << v.dump();
  EXPECT_EQ(lg["restore"]["ok"], true) << v.dump();
  EXPECT_EQ(lg["restore"]["readback"], lg["before"]);
  EXPECT_EQ(v["restored"], true);
  // Qualification (after the variant, before the cgroups) saw the candidate's values.
  EXPECT_EQ(cand["qual"]["recorded"]["swappiness"], 200) << cand["qual"]["recorded"].dump();
  EXPECT_EQ(cand["qual"]["recorded"]["mglru_enabled"], lg["readback"]);

  // The baseline wrote nothing and saw the guest's own values.
  EXPECT_TRUE(base["outcome"]["variant"]["settings"].empty()) << base["outcome"]["variant"].dump();
  EXPECT_EQ(base["qual"]["recorded"]["swappiness"].dump(), sw["before"].get<std::string>());
  EXPECT_EQ(base["qual"]["recorded"]["mglru_enabled"], lg["before"]);
  if (!HasFailure()) std::filesystem::remove_all(vm.dir);
}
