// `harness run campaigns/smoke.yaml` on a local qemu guest (booted by the harness): every
// case completed, with real telemetry, canary traces and controller events in the DB.
#include "results/db.hpp"
#include "tests/common/campaign_vm.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace {
std::int64_t count(results::Db& db, const std::string& sql) {
  results::Stmt q(db, sql);
  q.step();
  return q.is_null(0) ? -1 : q.int64(0);
}
}  // namespace

TEST(SmokeCampaign, RunsToCompletionOnALocalGuest) {
  // A private cache under the build tree, with an image built from this build's binaries
  // (never a stale image from ~/.cache, and nothing there is needed on a new machine).
  const test_support::CampaignVm vm("smoke");
  const std::string db_path = vm.dir + "/smoke.db";
  int rc = vm.harness("vm image").code;
  if (rc == 0) rc = vm.run_then_down("run " + std::string(HARNESS_SOURCE_DIR) + "/campaigns/smoke.yaml " + db_path +
                                     " --plain")
                        .code;
  ASSERT_EQ(rc, 0) << "see " << vm.log;
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(db, "SELECT count(*) FROM schedule WHERE state = 'completed'"), 3);
  EXPECT_EQ(count(db, "SELECT count(DISTINCT configuration) FROM cases WHERE status = 'completed'"), 3);
  // Real telemetry: 1 Hz samples over >= 50 s of phases, PSI read from the guest kernel.
  EXPECT_GE(count(db, "SELECT min(n) FROM (SELECT count(*) AS n FROM telemetry GROUP BY case_id)"), 40);
  EXPECT_GT(count(db, "SELECT max(bg_some_us) FROM telemetry"), 0);
  EXPECT_GT(count(db, "SELECT count(*) FROM canary_requests"), 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE kernel_release IS NULL OR accelerator IS NULL"), 0);
  std::filesystem::remove_all(vm.dir);
}
