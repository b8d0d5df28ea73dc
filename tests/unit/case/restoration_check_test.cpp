// Restoration verification against files captured in a real guest before and after a
// teardown (tests/unit/case/fixtures/6.1.0-57-cloud-amd64/restoration/{dirty,clean}).
#include <gtest/gtest.h>

#include "tests/common/fixture_file.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "harness/case/host/restoration_check.hpp"
#include "harness/kernel/cgroup.hpp"
#include "harness/kernel/swap.hpp"

namespace {
const std::string kDir = "tests/unit/case/fixtures/6.1.0-57-cloud-amd64/restoration/";

using test_support::fixture_text;

/// Builds an observation the way the executor does, from one captured state.
harness::case_::RestorationObservation observe(const std::string& state) {
  harness::case_::RestorationObservation o;
  o.swaps = harness::kernel::parse_swaps(fixture_text(kDir + state + "/proc-swaps"), state + "/proc-swaps");
  o.case_swap_paths = {"/dev/zram0", "/mnt/swapfile"};
  std::istringstream ls(fixture_text(kDir + state + "/cgroup-root-ls"));
  for (std::string name; std::getline(ls, name);)
    if (name == "harness") o.cgroups_present.push_back("sys/fs/cgroup/harness");
  // Each capture holds what its state needs; a missing file fails (fixture_text), never skips:
  // dirty has the stray process list, clean the zram disksize after reset.
  if (state == "dirty")
    for (pid_t p : harness::kernel::parse_pid_list(fixture_text(kDir + state + "/bg-cgroup.procs"), "bg-cgroup.procs"))
      o.stray_pids.push_back(p);
  if (state == "clean") o.zram_disksize_bytes = std::stoull(fixture_text(kDir + state + "/zram0-disksize"));
  return o;
}
}  // namespace

TEST(RestorationCheck, CapturedCleanStateIsClean) {
  auto o = observe("clean");
  EXPECT_TRUE(o.swaps.empty());
  ASSERT_TRUE(o.zram_disksize_bytes.has_value());
  EXPECT_EQ(*o.zram_disksize_bytes, 0u);
  auto v = harness::case_::verify_restoration(o);
  EXPECT_TRUE(v.clean);
  EXPECT_TRUE(v.problems.empty());
  EXPECT_EQ(v.to_json()["clean"], true);
}

TEST(RestorationCheck, CapturedDirtyStateNamesEveryProblem) {
  auto o = observe("dirty");
  ASSERT_EQ(o.swaps.size(), 2u);
  ASSERT_EQ(o.stray_pids.size(), 1u);
  auto v = harness::case_::verify_restoration(o);
  EXPECT_FALSE(v.clean);
  auto has = [&](const std::string& needle) {
    return std::any_of(v.problems.begin(), v.problems.end(),
                       [&](const std::string& p) { return p.find(needle) != std::string::npos; });
  };
  EXPECT_TRUE(has("/dev/zram0"));
  EXPECT_TRUE(has("103424 KiB"));
  EXPECT_TRUE(has("/mnt/swapfile"));  // still active even though it holds 0 KiB
  EXPECT_TRUE(has("cgroup sys/fs/cgroup/harness still exists"));
  EXPECT_TRUE(has("stray process 242"));
  EXPECT_EQ(v.problems.size(), 4u);
}

TEST(RestorationCheck, SwapOfOthersInUseIsUnclean) {
  auto o = observe("dirty");
  o.case_swap_paths = {};  // devices not enabled by the case: only used ones are problems
  o.cgroups_present.clear();
  o.stray_pids.clear();
  auto v = harness::case_::verify_restoration(o);
  EXPECT_FALSE(v.clean);
  ASSERT_EQ(v.problems.size(), 1u);
  EXPECT_NE(v.problems[0].find("swap in use: /dev/zram0"), std::string::npos);
}

TEST(RestorationCheck, ZramNotResetIsUnclean) {
  auto o = observe("clean");
  o.zram_disksize_bytes = 536870912;
  auto v = harness::case_::verify_restoration(o);
  EXPECT_FALSE(v.clean);
  ASSERT_EQ(v.problems.size(), 1u);
  EXPECT_NE(v.problems[0].find("zram not reset"), std::string::npos);
}
