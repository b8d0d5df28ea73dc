// `harness run campaigns/smoke.yaml` on a local qemu guest (booted by the harness): every
// case completed, with real telemetry, canary traces and controller events in the DB. Then the
// guest's DB is analysed (`harness analyze`, what main.sh prints): Table 4 has its four rows
// over the one triplet, one case per configuration, the verdict says "not assessable" (zero-width
// intervals), and the independent reference (analysis/reference/bootstrap_ref.py) gives the same
// Table 4 and outcome counts on that DB.
#include "results/db.hpp"
#include "tests/common/analysis_vs_reference.hpp"
#include "tests/common/campaign_vm.hpp"
#include "tests/common/db_query.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

using test_support::db_count;

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
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM schedule WHERE state = 'completed'"), 3);
  EXPECT_EQ(db_count(db, "SELECT count(DISTINCT configuration) FROM cases WHERE status = 'completed'"), 3);
  // Real telemetry: 1 Hz samples over >= 50 s of phases, PSI read from the guest kernel.
  EXPECT_GE(db_count(db, "SELECT min(n) FROM (SELECT count(*) AS n FROM telemetry GROUP BY case_id)"), 40);
  EXPECT_GT(db_count(db, "SELECT max(bg_some_us) FROM telemetry"), 0);
  EXPECT_GT(db_count(db, "SELECT count(*) FROM canary_requests"), 0);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM cases WHERE kernel_release IS NULL OR accelerator IS NULL"), 0);

  // The analysis of this guest's DB, and the reference on the same DB.
  const auto a = test_support::analyse_with_reference(db_path, vm.dir + "/report");
  ASSERT_NO_FATAL_FAILURE(test_support::expect_agreement(a, 1, 0.0));
  const auto t4 = test_support::report_rows(a.report, "table4_primary");
  const char* labels[] = {"compute: bounded-reclaim / static-zram", "compute: bounded-reclaim / delayed-activation",
                          "sqlite: bounded-reclaim / static-zram", "sqlite: bounded-reclaim / delayed-activation"};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(t4[k]["comparison"], labels[k]);
    EXPECT_GT(t4[k]["ratio"].get<double>(), 0.0);
    EXPECT_EQ(t4[k]["ratio_lower"], t4[k]["ratio"]) << "one triplet: a zero-width interval";
    EXPECT_EQ(t4[k]["ratio_upper"], t4[k]["ratio"]);
  }
  for (const auto& row : test_support::report_rows(a.report, "outcome_counts")) {
    EXPECT_EQ(row["cases"], 1) << row.dump();
    EXPECT_EQ(row["lost_cases"], 0) << row.dump();
    EXPECT_EQ(row["imputed_p99_values"], 0) << row.dump();
  }
  EXPECT_THAT(a.report_md, ::testing::HasSubstr("NOT ASSESSABLE (no resampling variability)"));
  EXPECT_EQ(a.report["extra"]["verdict"]["assessable"], false) << a.report["extra"]["verdict"].dump();
  EXPECT_EQ(a.report["extra"]["verdict"]["general_benefit"], false);
  EXPECT_THAT(a.report["extra"]["verdict"]["text"].get<std::string>(), ::testing::HasSubstr("NOT ASSESSABLE"));
  if (!HasFailure()) std::filesystem::remove_all(vm.dir);
}
