// Kernel-interface faults (harness::kernel::Fs::inject_fault) driven through the real case code
// over a scratch copy of the 6.1 guest capture (tests/fixtures/6.1.0-57-cloud-amd64):
//   - executor: a setup failure (EPERM on mkdir of the parent cgroup) -> infra_failed,
//     before any workload or pressure, restoration still recorded;
//   - CaseCgroups: setup failure names the step and errno; rmdir EBUSY and a populated
//     cgroup (kill_all timeout) during restoration are recorded, never thrown;
//   - Backend: prepare failure (EBUSY disksize, ENOMEM mkswap, EPERM swapon) names the
//     step; a failed delayed swapon (EBUSY) is an outcome, not an exception; swapoff
//     ENOMEM/EINTR in teardown is recorded with its errno and makes restoration unclean;
//   - ReclaimAction: EAGAIN / EINTR from memory.reclaim recorded, and the write made once
//     (never retried).
// The delayed-swapon and teardown cases test the smallest real units that hold the logic
// (Backend, CaseCgroups, ReclaimAction); restoration as a whole is restoration_test.cpp,
// and whole cases over the capture are outcome_compat_test.cpp.
// swapon/swapoff/mkswap are always stubbed (err 0 = pretend success): the tests run as
// root and must never reach the real syscalls.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "harness/case/host/backend.hpp"
#include "harness/case/host/case_cgroups.hpp"
#include "harness/case/run/executor.hpp"
#include "harness/case/control/reclaim_action.hpp"
#include "harness/case/host/restoration_check.hpp"
#include "harness/case/spec/spec.hpp"
#include "tests/common/slurp.hpp"
#include "harness/kernel/swap.hpp"
#include "results/db.hpp"
#include "tests/common/agent_support.hpp"
#include "tests/unit/case/case_scratch.hpp"

namespace fs = std::filesystem;
using harness::kernel::FaultScope;
using harness::kernel::FsOp;
using namespace case_test;

// ---------------------------------------------------------------- Backend ----------

TEST(FaultBackend, PrepareFailureNamesTheStepAndErrno) {
  struct Case {
    const char* path;
    FsOp op;
    int err;
    const char* step;
  };
  for (const Case& c : {Case{"zram1/disksize", FsOp::Write, EBUSY, "zram disksize"},
                        Case{"/dev/zram1", FsOp::Mkswap, ENOMEM, "mkswap /dev/zram1"},
                        Case{kSwapfile.c_str(), FsOp::Swapon, EPERM, "swapon /var/lib/harness/swapfile"},
                        Case{"zram1/comp_algorithm", FsOp::Write, EINTR, "zram comp_algorithm"}}) {
    SCOPED_TRACE(c.step);
    Scratch t;
    FaultScope f;
    f.fail(c.path, c.err, c.op);  // first match wins: set before the stubs
    stub_swap(f);
    harness::case_::Backend b(harness::kernel::Fs(t.root()), backend_spec(), harness::case_::ZramAtStart::On);
    std::vector<harness::case_::StepRecord> steps;
    try {
      b.prepare(steps);
      ADD_FAILURE() << "prepare succeeded despite the fault";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(c.step), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("errno " + std::to_string(c.err)), std::string::npos) << e.what();
    }
    ASSERT_FALSE(steps.empty());
    EXPECT_EQ(steps.back().step.rfind(c.step, 0), 0u) << dump(steps);
    EXPECT_EQ(steps.back().err, c.err);
    EXPECT_EQ(harness::kernel::Fs::fault_hits(c.path), 1);
  }
}

TEST(FaultBackend, FailedDelayedSwaponIsAnOutcomeNotAnException) {
  Scratch t;
  FaultScope f;
  f.fail("/dev/zram1", EBUSY, FsOp::Swapon);
  stub_swap(f);
  harness::case_::Backend b(harness::kernel::Fs(t.root()), backend_spec(), harness::case_::ZramAtStart::Prepared);
  std::vector<harness::case_::StepRecord> steps;
  ASSERT_NO_THROW(b.prepare(steps)) << dump(steps);
  // Delayed: zram prepared but not swapped on by prepare (the fault was not consumed).
  EXPECT_EQ(find_step(steps, "swapon /dev/zram1"), nullptr) << dump(steps);
  harness::case_::StepRecord on;
  ASSERT_NO_THROW(on = b.activate());
  EXPECT_EQ(on.step, "swapon /dev/zram1 prio 100");
  EXPECT_EQ(on.err, EBUSY);
  EXPECT_NE(on.message.find("errno " + std::to_string(EBUSY)), std::string::npos) << on.message;
  EXPECT_EQ(on.to_json()["errno"], EBUSY);
  EXPECT_FALSE(b.zram_on());
  EXPECT_EQ(b.enabled_paths(), std::vector<std::string>{kSwapfile});  // zram never counted as enabled
  // Teardown does not swapoff a device that never went on, and resets zram.
  std::vector<harness::case_::StepRecord> down;
  b.teardown(down);
  EXPECT_EQ(find_step(down, "swapoff /dev/zram1"), nullptr) << dump(down);
  ASSERT_NE(find_step(down, "swapoff " + kSwapfile), nullptr) << dump(down);
  ASSERT_NE(find_step(down, "zram reset"), nullptr) << dump(down);
  EXPECT_EQ(find_step(down, "zram reset")->err, 0);
  ASSERT_NE(find_step(down, "zram hot_remove zram1"), nullptr) << dump(down);
  EXPECT_EQ(t.get("sys/class/zram-control/hot_remove"), "1");
}

TEST(FaultBackend, TeardownSwapoffFailureIsRecordedWithItsErrnoAndRestorationIsUnclean) {
  for (int err : {ENOMEM, EINTR, EBUSY}) {
    SCOPED_TRACE(err);
    Scratch t;
    FaultScope f;
    f.fail("/dev/zram1", err, FsOp::Swapoff);
    stub_swap(f);
    harness::kernel::Fs fsx(t.root());
    harness::case_::Backend b(fsx, backend_spec(), harness::case_::ZramAtStart::On);
    std::vector<harness::case_::StepRecord> steps;
    ASSERT_NO_THROW(b.prepare(steps)) << dump(steps);
    std::vector<harness::case_::StepRecord> down;
    ASSERT_NO_THROW(b.teardown(down));
    const auto* off = find_step(down, "swapoff /dev/zram1");
    ASSERT_NE(off, nullptr) << dump(down);
    EXPECT_EQ(off->err, err);
    // zram still swapped on: it must not be reset or removed under the kernel's feet, and
    // the ownership marker stays for the next case's leftover cleanup.
    EXPECT_EQ(find_step(down, "zram reset"), nullptr) << dump(down);
    EXPECT_EQ(find_step(down, "zram hot_remove"), nullptr) << dump(down);
    EXPECT_FALSE(b.zram_released());
    ASSERT_TRUE(harness::kernel::owned_zram(fsx));
    EXPECT_EQ(harness::kernel::owned_zram(fsx)->id, 1);
    ASSERT_NE(find_step(down, "swapoff " + kSwapfile), nullptr);
    EXPECT_EQ(find_step(down, "swapoff " + kSwapfile)->err, 0);  // one failure does not stop the rest
    // The restoration verdict over what the host then shows (/proc/swaps still lists the
    // case's /dev/zram1) is unclean and names the device.
    t.put("proc/swaps", "Filename Type Size Used Priority\n/dev/zram1 partition 524284 0 100\n");
    harness::case_::RestorationObservation obs;
    obs.swaps = harness::kernel::read_swaps(fsx);
    obs.case_swap_paths = b.enabled_paths();
    auto v = harness::case_::verify_restoration(obs);
    EXPECT_FALSE(v.clean);
    EXPECT_NE(v.to_json().dump().find("/dev/zram1 enabled by the case is still active"), std::string::npos)
        << v.to_json().dump();
  }
}

// ------------------------------------------- the harness's own zram device ----------
// hot_add/hot_remove, ownership marker, EBUSY retried and recorded, foreign devices
// untouched (a device another tool set up is never the harness's); a leftover that cannot
// be released says why (the cause first, so that the operator can act on it).

TEST(ZramOwnership, PrepareHotAddsItsOwnDeviceAndTeardownRemovesIt) {
  Scratch t;
  const std::string zram0_disksize = t.get("sys/block/zram0/disksize");
  FaultScope f;
  stub_swap(f);
  harness::kernel::Fs fsx(t.root());
  harness::case_::Backend b(fsx, backend_spec(), harness::case_::ZramAtStart::On, fast_retry());
  std::vector<harness::case_::StepRecord> steps;
  ASSERT_NO_THROW(b.prepare(steps)) << dump(steps);
  ASSERT_NE(find_step(steps, "zram hot_add -> zram1"), nullptr) << dump(steps);
  EXPECT_EQ(b.zram_path(), "/dev/zram1");
  EXPECT_EQ(t.get("sys/block/zram1/disksize"), "512M");  // configured through its own sysfs dir
  ASSERT_TRUE(harness::kernel::owned_zram(fsx));
  EXPECT_EQ(harness::kernel::owned_zram(fsx)->id, 1);
  std::vector<harness::case_::StepRecord> down;
  b.teardown(down);
  EXPECT_EQ(find_step(down, "zram reset")->err, 0) << dump(down);
  ASSERT_NE(find_step(down, "zram hot_remove zram1"), nullptr) << dump(down);
  EXPECT_EQ(t.get("sys/class/zram-control/hot_remove"), "1");
  EXPECT_TRUE(b.zram_released());
  EXPECT_FALSE(harness::kernel::read_zram_owner(fsx)) << "marker kept after release";
  const auto j = b.zram_json();
  EXPECT_EQ(j["device"], "/dev/zram1");
  EXPECT_EQ(j["how"], "hot_add");
  EXPECT_EQ(j["released"], true);
  EXPECT_EQ(j["ebusy_retries"], 0);
  // zram0 (swapped on in the capture: somebody else's) was never written.
  EXPECT_EQ(t.get("sys/block/zram0/reset"), "");
  EXPECT_EQ(t.get("sys/block/zram0/disksize"), zram0_disksize);
  for (const auto& st : steps) EXPECT_EQ(st.step.find("zram0"), std::string::npos) << st.step;
  for (const auto& st : down) EXPECT_EQ(st.step.find("zram0"), std::string::npos) << st.step;
}

TEST(ZramOwnership, TransientEbusyOnResetAndHotRemoveIsRetriedAndRecorded) {
  Scratch t;
  FaultScope f;
  f.fail("zram1/reset", EBUSY, FsOp::Write, 2).fail("zram-control/hot_remove", EBUSY, FsOp::Write, 1);
  stub_swap(f);
  harness::case_::Backend b(harness::kernel::Fs(t.root()), backend_spec(), harness::case_::ZramAtStart::On, fast_retry());
  std::vector<harness::case_::StepRecord> steps, down;
  ASSERT_NO_THROW(b.prepare(steps)) << dump(steps);
  b.teardown(down);
  const auto* reset = find_step(down, "zram reset");
  ASSERT_NE(reset, nullptr) << dump(down);
  EXPECT_EQ(reset->err, 0);
  EXPECT_EQ(reset->retries, 2);
  EXPECT_NE(reset->message.find("after 2 EBUSY retries"), std::string::npos) << reset->message;
  EXPECT_EQ(reset->to_json()["retries"], 2);
  const auto* rm = find_step(down, "zram hot_remove zram1");
  ASSERT_NE(rm, nullptr) << dump(down);
  EXPECT_EQ(rm->retries, 1);
  EXPECT_TRUE(b.zram_released());
  const auto j = b.zram_json();
  EXPECT_EQ(j["ebusy_retries"], 3) << j.dump();
  ASSERT_EQ(j["retried_steps"].size(), 2u) << j.dump();
  EXPECT_EQ(j["retried_steps"][0]["step"], "zram reset");
}

TEST(ZramOwnership, PersistentEbusyGivesUpAfterTheBoundAndKeepsTheMarker) {
  Scratch t;
  FaultScope f;
  f.fail("zram-control/hot_remove", EBUSY, FsOp::Write);
  stub_swap(f);
  harness::kernel::Fs fsx(t.root());
  harness::case_::Backend b(fsx, backend_spec(), harness::case_::ZramAtStart::On, fast_retry());
  std::vector<harness::case_::StepRecord> steps, down;
  ASSERT_NO_THROW(b.prepare(steps));
  b.teardown(down);
  const auto* rm = find_step(down, "zram hot_remove zram1");
  ASSERT_NE(rm, nullptr) << dump(down);
  EXPECT_EQ(rm->err, EBUSY);
  EXPECT_EQ(rm->retries, 3);  // fast_retry's three delays
  EXPECT_EQ(harness::kernel::Fs::fault_hits("zram-control/hot_remove"), 4);
  EXPECT_FALSE(b.zram_released());
  EXPECT_TRUE(harness::kernel::owned_zram(fsx)) << "the marker must stay for the next leftover cleanup";
  // The restoration verdict names the device left behind.
  harness::case_::RestorationObservation obs;
  obs.owned_zram_left = b.zram_path();
  auto v = harness::case_::verify_restoration(obs);
  EXPECT_FALSE(v.clean);
  EXPECT_NE(v.to_json().dump().find("/dev/zram1 created by the harness still exists"), std::string::npos);
}

TEST(ZramOwnership, WithoutZramControlAnUnusedDeviceIsBorrowedAndResetNotRemoved) {
  Scratch t;
  fs::remove_all(t.root() / "sys/class/zram-control");
  FaultScope f;
  stub_swap(f);
  harness::kernel::Fs fsx(t.root());
  harness::case_::Backend b(fsx, backend_spec(), harness::case_::ZramAtStart::On, fast_retry());
  std::vector<harness::case_::StepRecord> steps, down;
  ASSERT_NO_THROW(b.prepare(steps)) << dump(steps);
  ASSERT_NE(find_step(steps, "zram: no /sys/class/zram-control; borrowing unused zram1"), nullptr) << dump(steps);
  EXPECT_EQ(b.zram_json()["how"], "unused-device");
  b.teardown(down);
  EXPECT_EQ(find_step(down, "zram reset")->err, 0);
  EXPECT_EQ(find_step(down, "zram hot_remove"), nullptr) << dump(down);
  EXPECT_TRUE(b.zram_released());
  EXPECT_FALSE(harness::kernel::read_zram_owner(fsx));
  // No spare left (zram1 initialised by somebody): refused, with the module parameter.
  t.put("sys/block/zram1/initstate", "1\n");
  harness::case_::Backend b2(fsx, backend_spec(), harness::case_::ZramAtStart::On, fast_retry());
  std::vector<harness::case_::StepRecord> steps2;
  try {
    b2.prepare(steps2);
    ADD_FAILURE() << "took a device in use";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("num_devices=3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("never takes a device it did not create"), std::string::npos) << e.what();
  }
}

TEST(ZramOwnership, LeftoverCleanupReleasesOnlyTheMarkedDevice) {
  Scratch t;
  harness::kernel::Fs fsx(t.root());
  harness::kernel::write_zram_owner(fsx, {1, "case-fault-boot", harness::kernel::ZramOrigin::HotAdd});
  t.put("sys/block/zram1/initstate", "1\n");
  t.put("proc/swaps", "Filename Type Size Used Priority\n/dev/zram0 partition 65532 0 -2\n"
                      "/dev/zram1 partition 524284 0 100\n");
  FaultScope f;
  f.fail("zram1/reset", EBUSY, FsOp::Write, 1);
  f.fail("/dev/zram0", EPERM);  // any swap syscall on the foreign zram0 would hit this
  stub_swap(f);
  std::vector<harness::case_::StepRecord> steps;
  auto r = harness::case_::Backend::cleanup_leftovers(fsx, backend_spec(), steps, fast_retry());
  EXPECT_TRUE(r.released) << r.cause;
  ASSERT_NE(find_step(steps, "leftover swapoff /dev/zram1"), nullptr) << dump(steps);
  ASSERT_NE(find_step(steps, "leftover zram reset"), nullptr) << dump(steps);
  EXPECT_EQ(find_step(steps, "leftover zram reset")->retries, 1);
  ASSERT_NE(find_step(steps, "leftover zram hot_remove zram1"), nullptr) << dump(steps);
  for (const auto& st : steps) EXPECT_EQ(st.step.find("zram0"), std::string::npos) << st.step;
  EXPECT_FALSE(harness::kernel::read_zram_owner(fsx));
  EXPECT_EQ(harness::kernel::Fs::fault_hits("/dev/zram0"), 0) << "a swap syscall reached the foreign zram0";
  EXPECT_EQ(t.get("sys/block/zram0/reset"), "");
  // A marker of another boot is dropped without touching its device.
  harness::kernel::write_zram_owner(fsx, {1, "an-earlier-boot", harness::kernel::ZramOrigin::HotAdd});
  std::vector<harness::case_::StepRecord> steps2;
  EXPECT_TRUE(harness::case_::Backend::cleanup_leftovers(fsx, backend_spec(), steps2, fast_retry()).released);
  ASSERT_EQ(steps2.size(), 1u) << dump(steps2);
  EXPECT_EQ(steps2[0].step, "drop stale zram ownership marker (zram1: marker of another boot)");
  EXPECT_FALSE(harness::kernel::read_zram_owner(fsx));
}

TEST(ZramOwnership, LeftoverSwapoffEnomemStopsWithTheCauseAndTheHolders) {
  Scratch t;
  harness::kernel::Fs fsx(t.root());
  t.put("proc/swaps", "Filename Type Size Used Priority\n" + kSwapfile + " file 65532 24576 -2\n");
  t.put("proc/4242/status", "Name:\tpressure-gen\nState:\tT (stopped)\nVmSwap:\t   24576 kB\n");
  t.put("proc/4242/cgroup", "0::/holder\n");
  harness::kernel::write_zram_owner(fsx, {1, "case-fault-boot", harness::kernel::ZramOrigin::HotAdd});
  FaultScope f;
  f.fail(kSwapfile, ENOMEM, FsOp::Swapoff);
  stub_swap(f);
  std::vector<harness::case_::StepRecord> steps;
  auto r = harness::case_::Backend::cleanup_leftovers(fsx, backend_spec(), steps, fast_retry());
  EXPECT_FALSE(r.released);
  EXPECT_NE(r.cause.find("leftover swapoff /var/lib/harness/swapfile failed with ENOMEM"), std::string::npos) << r.cause;
  EXPECT_NE(r.cause.find("24576 KiB still swapped on /var/lib/harness/swapfile"), std::string::npos) << r.cause;
  EXPECT_NE(r.cause.find("pid 4242 pressure-gen (T (stopped), cgroup /holder) 24576 KiB"), std::string::npos) << r.cause;
  ASSERT_EQ(steps.size(), 1u) << dump(steps);  // stopped at the first failure
  EXPECT_EQ(steps[0].err, ENOMEM);
  EXPECT_TRUE(harness::kernel::read_zram_owner(fsx)) << "zram leftover handled after a failed step";
}

// ---------------------------------------------------------------- CaseCgroups ------

TEST(FaultCgroups, CreateFailureNamesTheStepAndErrno) {
  Scratch t;
  FaultScope f;
  // The capture already holds harness/{bg,fg} (with their files): mkdir is stubbed, so
  // the writes after it reach real files until the injected ENOMEM on bg memory.max.
  f.fail("sys/fs/cgroup/harness", 0, FsOp::Mkdir)
      .fail("harness/bg", 0, FsOp::Mkdir)
      .fail("harness/fg", 0, FsOp::Mkdir)
      .fail("harness/bg/memory.max", ENOMEM, FsOp::Write);
  harness::case_::CaseCgroups cg(harness::kernel::Fs(t.root()), cgroups_spec());
  std::vector<harness::case_::StepRecord> steps;
  try {
    cg.create(steps);
    ADD_FAILURE() << "create succeeded despite ENOMEM";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bg memory.max"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("errno " + std::to_string(ENOMEM)), std::string::npos) << e.what();
  }
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.back().err, ENOMEM) << dump(steps);
  // The steps before it ran (a write without O_TRUNC over the captured "cpu io memory").
  EXPECT_EQ(t.get("sys/fs/cgroup/harness/cgroup.subtree_control").rfind("+memory", 0), 0u);
}

TEST(FaultCgroups, MkdirEpermStopsAtTheFirstStep) {
  Scratch t;
  fs::remove_all(t.root() / "sys/fs/cgroup/harness");
  FaultScope f;
  f.fail("sys/fs/cgroup/harness", EPERM, FsOp::Mkdir);
  harness::case_::CaseCgroups cg(harness::kernel::Fs(t.root()), cgroups_spec());
  std::vector<harness::case_::StepRecord> steps;
  EXPECT_THROW(cg.create(steps), std::runtime_error);
  ASSERT_EQ(steps.size(), 1u) << dump(steps);
  EXPECT_EQ(steps[0].step, "mkdir sys/fs/cgroup/harness");
  EXPECT_EQ(steps[0].err, EPERM);
  EXPECT_TRUE(cg.present().empty());
}

TEST(FaultCgroups, RestorationRmdirEbusyIsRecordedNotThrown) {
  Scratch t;
  FaultScope f;
  f.fail("harness/bg", EBUSY, FsOp::Rmdir).fail("harness/fg", 0, FsOp::Rmdir).fail("sys/fs/cgroup/harness", 0, FsOp::Rmdir);
  harness::case_::CaseCgroups cg(harness::kernel::Fs(t.root()), cgroups_spec());
  std::vector<harness::case_::StepRecord> steps;
  ASSERT_NO_THROW(cg.remove(steps));
  const auto* bg = find_step(steps, "rmdir sys/fs/cgroup/harness/bg");
  ASSERT_NE(bg, nullptr) << dump(steps);
  EXPECT_EQ(bg->err, EBUSY);
  EXPECT_EQ(find_step(steps, "rmdir sys/fs/cgroup/harness/fg")->err, 0);
  // Still there: the verdict over it is unclean.
  harness::case_::RestorationObservation obs;
  obs.cgroups_present = cg.present();
  EXPECT_FALSE(harness::case_::verify_restoration(obs).clean);
}

TEST(FaultCgroups, KillAllTimesOutOnAPopulatedCgroupAndSaysSo) {
  Scratch t;  // the capture's harness/cgroup.events says "populated 1"
  harness::case_::CaseCgroups cg(harness::kernel::Fs(t.root()), cgroups_spec());
  auto r = cg.kill_all(200'000'000);
  EXPECT_EQ(r.err, ETIMEDOUT);
  EXPECT_EQ(r.message, "still populated after cgroup.kill");
  EXPECT_EQ(t.get("sys/fs/cgroup/harness/cgroup.kill"), "1");
  // cgroup.kill itself refused (EPERM): recorded, and the wait still bounded.
  FaultScope f;
  f.fail("harness/cgroup.kill", EPERM, FsOp::Write);
  auto r2 = cg.kill_all(100'000'000);
  EXPECT_EQ(r2.err, ETIMEDOUT);
  EXPECT_EQ(harness::kernel::Fs::fault_hits("harness/cgroup.kill"), 1);
}

// ---------------------------------------------------------------- ReclaimAction ----

TEST(FaultReclaim, EagainAndEintrAreRecordedAndTheWriteIsMadeOnce) {
  for (int err : {EAGAIN, EINTR, EBUSY}) {
    SCOPED_TRACE(err);
    Scratch t;
    FaultScope f;
    // times = 1: a retry would go through and write "96M" to the file.
    f.fail("harness/bg/memory.reclaim", err, FsOp::Write, 1);
    harness::kernel::Cgroup bg(harness::kernel::Fs(t.root()), "sys/fs/cgroup/harness/bg");
    harness::case_::ReclaimAction action(bg, 0);
    action.start(96ll << 20);
    auto rec = action.join();
    ASSERT_TRUE(rec);
    EXPECT_EQ(rec->write_errno, err);
    EXPECT_EQ(rec->requested_bytes, 96ll << 20);
    EXPECT_EQ(harness::kernel::Fs::fault_hits("harness/bg/memory.reclaim"), 1);
    EXPECT_EQ(t.get("sys/fs/cgroup/harness/bg/memory.reclaim"), "") << "the write was retried";
    EXPECT_STREQ(rec->outcome(4096), err == EAGAIN ? "partial" : "error");
    EXPECT_EQ(rec->to_json(4096)["write_errno"], err);
    // Readings around the failed write still taken (from the capture).
    EXPECT_TRUE(rec->pgsteal_before && rec->bg_current_before_bytes && rec->bg_current_after_bytes);
    EXPECT_GE(rec->end_ns, rec->start_ns);
  }
}

TEST(FaultReclaim, UnreadableMemoryStatIsNullNotZero) {
  Scratch t;
  FaultScope f;
  f.fail("harness/bg/memory.stat", EIO, FsOp::Read);
  harness::kernel::Cgroup bg(harness::kernel::Fs(t.root()), "sys/fs/cgroup/harness/bg");
  auto rec = harness::case_::ReclaimAction::run(bg, 96ll << 20, 0);
  EXPECT_EQ(rec.write_errno, 0);
  EXPECT_FALSE(rec.pgsteal_before);
  EXPECT_FALSE(rec.pgsteal_settled);
  EXPECT_FALSE(rec.achieved_bytes(4096));
}

// ---------------------------------------------------------------- executor ---------

TEST(FaultExecutor, SetupFailureIsInfraFailedBeforeAnyWorkloadOrPressure) {
  Scratch t;
  const auto o = executor_host(t);
  const auto spec = executor_spec(t, "fault-setup");
  FaultScope f;
  f.fail("sys/fs/cgroup/harness", EPERM, FsOp::Mkdir);
  stub_swap(f);
  auto r = harness::case_::run_case(spec, o);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.status, "infra_failed");
  EXPECT_NE(r.error.find("mkdir sys/fs/cgroup/harness"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("errno " + std::to_string(EPERM)), std::string::npos) << r.error;
  EXPECT_EQ(harness::kernel::Fs::fault_hits("sys/fs/cgroup/harness"), 1);
  EXPECT_FALSE(fs::exists(t.dir() / "ran")) << "a workload started after a failed setup";
  ASSERT_FALSE(r.bundle_path.empty());
  results::Db db(r.bundle_path, results::Db::Mode::ReadOnly);
  results::Stmt c(db, "SELECT status, error, outcome_json FROM cases");
  ASSERT_TRUE(c.step());
  EXPECT_EQ(c.text(0), "infra_failed");
  auto out = nlohmann::json::parse(c.text(2));
  EXPECT_EQ(out["workload_started"], false);
  EXPECT_FALSE(out.contains("argv")) << out.dump();
  ASSERT_TRUE(out["setup_steps"].is_array());
  ASSERT_FALSE(out["setup_steps"].empty());
  EXPECT_EQ(out["setup_steps"].back()["errno"], EPERM) << out["setup_steps"].dump();
  results::Stmt ph(db, "SELECT phase FROM phases ORDER BY start_ns");
  std::vector<std::string> phases;
  while (ph.step()) phases.push_back(ph.text(0));
  EXPECT_EQ(phases, std::vector<std::string>{"restoration"});  // no warmup, no pressure
  results::Stmt rs(db, "SELECT clean FROM restoration");
  ASSERT_TRUE(rs.step()) << "restoration not recorded after a setup failure";
  EXPECT_EQ(rs.int64(0), 1);
  results::Stmt te(db, "SELECT COUNT(*) FROM telemetry");
  ASSERT_TRUE(te.step());
  EXPECT_EQ(te.int64(0), 0);
}

// The cause first: a leftover swap device that cannot be released stops the case before
// any cgroup is created, naming swapoff's errno and who holds the memory.
TEST(FaultExecutor, UnreleasableLeftoverSwapStopsBeforeSetupWithTheCause) {
  Scratch t;
  const auto o = executor_host(t);
  const auto spec = executor_spec(t, "fault-leftover");
  t.put("proc/swaps", "Filename Type Size Used Priority\n" + kSwapfile + " file 65532 24576 -2\n");
  t.put("proc/4242/status", "Name:\tholder\nState:\tT (stopped)\nVmSwap:\t   24576 kB\n");
  t.put("proc/4242/cgroup", "0::/holder\n");
  FaultScope f;
  f.fail(kSwapfile, ENOMEM, FsOp::Swapoff);
  f.fail("sys/fs/cgroup/harness", 0, FsOp::Mkdir);  // counts any attempt to create the parent
  stub_swap(f);
  auto r = harness::case_::run_case(spec, o);
  EXPECT_EQ(r.status, "infra_failed");
  EXPECT_NE(r.error.find("swapfile failed with ENOMEM"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("pid 4242 holder (T (stopped), cgroup /holder)"), std::string::npos) << r.error;
  EXPECT_EQ(harness::kernel::Fs::fault_hits("sys/fs/cgroup/harness"), 0) << "a cgroup was created";
  EXPECT_FALSE(fs::exists(t.dir() / "ran"));
  ASSERT_FALSE(r.bundle_path.empty());
  results::Db db(r.bundle_path, results::Db::Mode::ReadOnly);
  results::Stmt c(db, "SELECT status, error, outcome_json FROM cases");
  ASSERT_TRUE(c.step());
  EXPECT_EQ(c.text(0), "infra_failed");
  const auto out = nlohmann::json::parse(c.text(2));
  ASSERT_EQ(out["leftover_steps"].size(), 1u) << out["leftover_steps"].dump();
  EXPECT_EQ(out["leftover_steps"][0]["errno"], ENOMEM);
  EXPECT_FALSE(out.contains("setup_steps")) << out.dump();
  results::Stmt ph(db, "SELECT COUNT(*) FROM phases");
  ASSERT_TRUE(ph.step());
  EXPECT_EQ(ph.int64(0), 0);
}

// ---------------------------------------------------------------- A/B variant ------

// The wrong guest (a cmdline parameter missing) is infra_failed before any cgroup exists
// and before any knob is written: a candidate case must never run on the baseline's boot.
TEST(FaultExecutor, VariantOnTheWrongGuestIsInfraFailedBeforeAnyCgroup) {
  Scratch t;
  FaultScope f;
  f.fail("sys/fs/cgroup/harness", 0, FsOp::Mkdir);  // counts any attempt to create the parent
  auto r = run_candidate(t, f, "ab-wrong-guest",
                         {{"sysctls", {{"vm.swappiness", "20"}}}, {"cmdline", {"harness.abtest=1"}}});
  EXPECT_EQ(r.status, "infra_failed");
  EXPECT_NE(r.error.find("booted without harness.abtest=1"), std::string::npos) << r.error;
  EXPECT_EQ(harness::kernel::Fs::fault_hits("sys/fs/cgroup/harness"), 0) << "a cgroup was created";
  EXPECT_EQ(t.get("proc/sys/vm/swappiness"), "60\n");
  ASSERT_FALSE(r.bundle_path.empty());
  const auto out = bundle_outcome(r.bundle_path);
  EXPECT_EQ(out["variant"]["boot"]["cmdline"]["harness.abtest=1"], false) << out.dump();
  EXPECT_TRUE(out["variant"]["settings"].empty()) << out.dump();
}

// A knob that cannot be written: infra_failed naming it and its errno, before any cgroup;
// the knob written before it is back at its value.
TEST(FaultExecutor, VariantWriteFailureIsInfraFailedAndTheOthersAreRestored) {
  Scratch t;
  FaultScope f;
  f.fail("sys/kernel/mm/lru_gen/enabled", EPERM, FsOp::Write);
  f.fail("sys/fs/cgroup/harness", 0, FsOp::Mkdir);
  auto r = run_candidate(t, f, "ab-write-fails",
                         {{"sysctls", {{"vm.swappiness", "20"}}},
                          {"sysfs", {{"/sys/kernel/mm/lru_gen/enabled", "0x0007"}}}});
  EXPECT_EQ(r.status, "infra_failed");
  EXPECT_NE(r.error.find("/sys/kernel/mm/lru_gen/enabled"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("EPERM"), std::string::npos) << r.error;
  EXPECT_EQ(harness::kernel::Fs::fault_hits("sys/fs/cgroup/harness"), 0) << "a cgroup was created";
  EXPECT_EQ(t.get("proc/sys/vm/swappiness"), "60\n");
  const auto out = bundle_outcome(r.bundle_path);
  EXPECT_EQ(out["variant"]["settings"]["vm.swappiness"]["readback"], "20") << out.dump();
  EXPECT_EQ(out["variant"]["settings"]["vm.swappiness"]["restore"]["readback"], "60") << out.dump();
  EXPECT_EQ(out["variant"]["restored"], true);
}

// Applied, then the case fails in setup: restoration writes the knobs back and its
// verdict (restoration row) is clean only because they read back.
TEST(FaultExecutor, VariantAppliedThenSetupFailureRestoresItInTheRestoration) {
  Scratch t;
  FaultScope f;
  f.fail("sys/fs/cgroup/harness", EPERM, FsOp::Mkdir);
  auto r = run_candidate(t, f, "ab-setup-fails", {{"sysctls", {{"vm.swappiness", "20"}}}});
  EXPECT_EQ(r.status, "infra_failed");
  EXPECT_NE(r.error.find("mkdir sys/fs/cgroup/harness"), std::string::npos) << r.error;
  EXPECT_EQ(t.get("proc/sys/vm/swappiness"), "60\n");
  const auto out = bundle_outcome(r.bundle_path);
  EXPECT_EQ(out["variant"]["settings"]["vm.swappiness"]["before"], "60");
  EXPECT_EQ(out["variant"]["settings"]["vm.swappiness"]["readback"], "20");
  EXPECT_EQ(out["variant"]["settings"]["vm.swappiness"]["restore"]["ok"], true);
  EXPECT_EQ(out["restoration"]["clean"], true) << out["restoration"].dump();
}
