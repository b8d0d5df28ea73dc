// Reboot between cases on a reused VM: a local guest booted with
// `harness vm up --allow-guest-reboot` behaves as a real VM whose provider allows reboots.
// Listed in a hosts file as a real host with reboot_between_cases: true, `harness run`
// reboots it through its agent (POST /v1/reboot) before each of the two cases of
// tests/vm/campaign/reboot.yaml and waits for a new boot id. Asserted: both cases completed,
// each attempt records two different boot ids, and the second case ran on a later boot than
// the first (its "before" is the first case's "after").
#include "results/db.hpp"
#include "tests/common/campaign_vm.hpp"
#include "tests/common/listed_guest.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

TEST(RebootBetweenCases, EachCaseStartsOnAFreshBootOfTheSameVm) {
  const test_support::CampaignVm vm("reboot");
  const std::string dir = vm.dir;
  // The guest, listed as a real VM whose provider reboots it between cases.
  const auto listed = test_support::boot_listed_guest(vm, "--allow-guest-reboot",
                                                      "    reboot_between_cases: true\n    reboot_timeout_s: 300\n");
  ASSERT_EQ(listed.error, "");
  const std::string& hosts = listed.hosts_file;
  const std::string db_path = dir + "/reboot.db";
  const auto run = vm.run_then_down("run " + std::string(HARNESS_SOURCE_DIR) + "/tests/vm/campaign/reboot.yaml " +
                                    db_path + " --hosts " + hosts + " --plain",
                                    "vm down vm0");
  ASSERT_EQ(run.code, 0) << run.out;

  results::Db db(db_path, results::Db::Mode::ReadOnly);
  results::Stmt q(db,
                  "SELECT a.case_id, a.detail_json, c.status FROM attempts a "
                  "JOIN cases c USING (case_id) WHERE a.kind = 'run' ORDER BY a.started_unix_ns");
  std::vector<nlohmann::json> reboots;
  while (q.step()) {
    EXPECT_EQ(q.text(2), "completed") << q.text(0);
    const auto d = nlohmann::json::parse(q.text(1));
    ASSERT_TRUE(d.contains("reboot")) << q.text(0) << ": " << d.dump();
    reboots.push_back(d["reboot"]);
  }
  ASSERT_EQ(reboots.size(), 2u);
  for (const auto& r : reboots) {
    const std::string before = r.value("boot_id_before", ""), after = r.value("boot_id_after", "");
    EXPECT_FALSE(before.empty()) << r.dump();
    EXPECT_FALSE(after.empty()) << r.dump();
    EXPECT_NE(before, after) << r.dump();
  }
  EXPECT_EQ(reboots[1].value("boot_id_before", ""), reboots[0].value("boot_id_after", "x"))
      << "the second case's reboot did not start from the boot the first case ran on";
  std::filesystem::remove_all(dir);
}

}  // namespace
