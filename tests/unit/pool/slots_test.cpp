// Which local guest serves which campaign VM (harness/pool/local_guest/slots.hpp), on a cache
// tree of owner records with no qemu running (issue 59 item 7): a campaign alone keeps its
// names; a second campaign whose vm0 is held by a live runner takes the lowest free slot; the
// same campaign and DB get their own slot back (adoption after a kill); a record of a runner
// that is gone frees its slot; every claim is written before the lock goes. The real thing,
// two campaigns' guests at once, is tests/vm/campaign/concurrent_vm_test.cpp.
#include "harness/pool/local_guest/owner.hpp"
#include "harness/pool/local_guest/slots.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/common/slurp.hpp"
#include "tests/common/temp_dir.hpp"

namespace fs = std::filesystem;
namespace lg = harness::pool::local_guest;

namespace {

/// The guests claimed, in the order of the campaign's VMs.
std::vector<std::string> guests_of(const std::vector<lg::Slot>& s) {
  std::vector<std::string> out;
  for (const auto& x : s) out.push_back(x.guest);
  return out;
}

/// A pid that was a process and is gone (a child that exited and was reaped).
int gone_pid() {
  const pid_t p = ::fork();
  if (p == 0) _exit(0);
  int st = 0;
  ::waitpid(p, &st, 0);
  return p;
}

/// Rewrites the runner pid of local guest `slot`'s owner record (a claim made by another process).
void set_runner(const fs::path& cache, const std::string& slot, int pid) {
  const fs::path f = cache / "reclaim-harness" / "vms" / slot / "owner.json";
  std::string t = test_support::slurp(f);
  const auto at = t.find("\"runner_pid\": ");
  ASSERT_NE(at, std::string::npos) << t;
  const auto end = t.find_first_of(",\n}", at + 14);
  t.replace(at + 14, end - at - 14, std::to_string(pid));
  std::ofstream(f, std::ios::trunc) << t;
}

class Slots : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("XDG_CACHE_HOME", dir_.path().c_str(), 1); }
  void TearDown() override { ::unsetenv("XDG_CACHE_HOME"); }
  test_support::TempDir dir_;
};

}  // namespace

TEST_F(Slots, ACampaignAloneKeepsItsNamesAndGetsThemBack) {
  const auto a = lg::claim_slots("pilot", dir_ / "pilot.db", {"vm0", "vm1"});
  EXPECT_EQ(guests_of(a), (std::vector<std::string>{"vm0", "vm1"}));
  EXPECT_EQ(a[1].vm, "vm1");
  // The claim is on disk: owner.json names the campaign, the DB and the VM served.
  const auto o = lg::read_guest_owner(dir_ / "reclaim-harness/vms/vm1");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->campaign, "pilot");
  EXPECT_EQ(o->guest, "vm1");
  EXPECT_EQ(o->runner_pid, ::getpid());
  // The same campaign and DB (a runner killed and started again) get the same slots back.
  EXPECT_EQ(guests_of(lg::claim_slots("pilot", dir_ / "pilot.db", {"vm0", "vm1"})), guests_of(a));
}

TEST_F(Slots, ASecondCampaignTakesFreeSlotsWhileTheFirstsRunnerLives) {
  lg::claim_slots("pilot", dir_ / "pilot.db", {"vm0"});  // this process: a live runner
  const auto ci = lg::claim_slots("ci-regression", dir_ / "ci.db", {"vm0", "vm1"});
  EXPECT_EQ(ci[0].vm, "vm0");
  EXPECT_EQ(ci[0].guest, "vm2");  // vm0 held; vm1 is the second VM's own name, so the first gets vm2
  EXPECT_EQ(ci[1].guest, "vm1");
  EXPECT_EQ(lg::read_guest_owner(dir_ / "reclaim-harness/vms/vm2")->guest, "vm0");
  // Another DB of the same campaign is another campaign run: it does not take the pilot's slot.
  EXPECT_EQ(lg::claim_slots("pilot", dir_ / "pilot-2.db", {"vm0"})[0].guest, "vm3");
  // slots_of: what `harness vm down --campaign` and release_orphans stop.
  const auto mine = lg::slots_of("ci-regression", "");
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0].guest, "vm1");
  EXPECT_EQ(mine[0].vm, "vm1");
  EXPECT_EQ(mine[1].guest, "vm2");
  EXPECT_EQ(mine[1].vm, "vm0");
  EXPECT_EQ(lg::slots_of("pilot", dir_ / "pilot.db").size(), 1u);
  EXPECT_EQ(lg::slots_of("pilot", "").size(), 2u);
}

TEST_F(Slots, ASlotWhoseRunnerIsGoneAndWhoseGuestIsStoppedIsFree) {
  lg::claim_slots("pilot", dir_ / "pilot.db", {"vm0"});
  set_runner(fs::path(dir_.path()), "vm0", gone_pid());
  EXPECT_EQ(lg::claim_slots("ci-regression", dir_ / "ci.db", {"vm0"})[0].guest, "vm0");
  EXPECT_EQ(lg::read_guest_owner(dir_ / "reclaim-harness/vms/vm0")->campaign, "ci-regression");
  // A record written before issue 59 names no VM: it served the VM of its slot's name.
  EXPECT_EQ(lg::served_vm("", "vm4"), "vm4");
  EXPECT_EQ(lg::served_vm("vm0", "vm4"), "vm0");
}
