// Smoke run of campaign_footprint.sh (label vm): one static-zram case with short phases through
// `harness run` on a private local guest, to check that the bench still runs end to end (the
// case completed through the agent, its figures printed), never its numbers. The full figures:
// the script by hand with the study's phase lengths (docs/DESIGN.md "Performance").
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "tests/common/campaign_vm.hpp"
#include "tests/common/guest_exec.hpp"

TEST(CampaignFootprintSmoke, OneCaseThroughTheAgentPrintsItsFigures) {
  const test_support::CampaignVm vm("footprint");
  const std::string out = vm.dir + "/bench", log = vm.dir + "/bench.log";
  // Phases as short as the smoke needs (2/5/2 s): only that the case completes through the agent
  // and that the figures print are checked; the script's defaults (120/300/120 s) are for the figures.
  const std::string cmd = vm.env() + "WARMUP_S=2 PRESSURE_S=5 RECOVERY_S=2 sh " HARNESS_SOURCE_DIR
                          "/tests/bench/harness_self/campaign_footprint.sh " HARNESS_BINARY_DIR " " + out + " > " +
                          log + " 2>&1";
  const int rc = test_support::sh(cmd);
  vm.harness("vm down");  // the script downs its guests too; this one runs whatever the script gave
  const std::string text = test_support::slurp(log);
  std::cout << text;
  EXPECT_EQ(rc, 0) << cmd << "\n" << text << test_support::slurp(out + "/run.log");
  // The figures come from the agent's and the executor's own accounting in outcome_json.
  EXPECT_NE(text.find("CPU over the measured phases (executor + agent)"), std::string::npos) << text;
  EXPECT_NE(text.find("| agent CPU over the whole case |"), std::string::npos) << text;
}
