// `harness run tests/vm/campaign/ab-short.yaml` on a local qemu guest (issue 15): one A/B
// pair of bounded-reclaim cases. Both complete; the candidate's guest was booted with the
// variant's kernel parameter (environment cmdline) and its knobs were written, read back
// (outcome_json.variant, and qualification's independent reading) and restored; the
// baseline's guest has neither the parameter nor the knobs.
#include "results/db.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "tests/common/campaign_vm.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

TEST(AbCampaignVm, CandidateVariantIsBootedAppliedReadBackAndRestored) {
  const test_support::CampaignVm vm("ab");
  const std::string db_path = vm.dir + "/ab.db";
  const auto image = vm.harness("vm image");
  ASSERT_EQ(image.code, 0) << image.out;
  const auto run = vm.run_then_down("run " + std::string(HARNESS_SOURCE_DIR) + "/tests/vm/campaign/ab-short.yaml " +
                                    db_path + " --plain");
  ASSERT_EQ(run.code, 0) << run.out;

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
  std::filesystem::remove_all(vm.dir);
}
