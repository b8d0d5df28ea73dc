// The fault-injection seam of harness::kernel::Fs (fs.hpp: inject_fault): the errno a test names
// comes back from the named operation on the named path, and from nothing else; the
// file is not touched; `times` limits it; clearing restores the real calls.
#include <gtest/gtest.h>

#include <cerrno>

#include "harness/kernel/cgroup.hpp"
#include "harness/kernel/errors.hpp"
#include "harness/kernel/swap.hpp"
#include "harness/kernel/zram.hpp"
#include "tmp_tree.hpp"

using namespace harness::kernel;

namespace {
struct Tree : kernel_test::TmpTree {
  Tree() {
    for (const char* f : {"memory.reclaim", "memory.max", "cgroup.procs", "memory.current"})
      put(std::string("sys/fs/cgroup/h/bg/") + f, "");
    put("sys/fs/cgroup/h/fg/memory.reclaim", "");
    put("sys/block/zram0/disksize", "0\n");
  }
};
}  // namespace

TEST(FaultInjection, EachErrnoComesBackFromTheNamedWriteOnly) {
  Tree t;
  Fs fs(t.dir());
  for (int err : {EBUSY, EINTR, EPERM, ENOMEM, EAGAIN}) {
    SCOPED_TRACE(err);
    FaultScope faults;
    faults.fail("bg/memory.reclaim", err);
    auto w = fs.write("/sys/fs/cgroup/h/bg/memory.reclaim", "96M");
    EXPECT_EQ(w.err, err);
    EXPECT_NE(w.message().find("errno " + std::to_string(err)), std::string::npos) << w.message();
    EXPECT_EQ(t.get("sys/fs/cgroup/h/bg/memory.reclaim"), "");  // not written
    // Same file name in another cgroup, and another file of the same cgroup: untouched.
    EXPECT_TRUE(fs.write("sys/fs/cgroup/h/fg/memory.reclaim", "1M").ok());
    EXPECT_TRUE(fs.write("sys/fs/cgroup/h/bg/memory.max", "1").ok());
    EXPECT_EQ(Fs::fault_hits("bg/memory.reclaim"), 1);
  }
  // Scope gone: the real write happens again.
  EXPECT_TRUE(fs.write("sys/fs/cgroup/h/bg/memory.reclaim", "96M").ok());
  EXPECT_EQ(t.get("sys/fs/cgroup/h/bg/memory.reclaim"), "96M");
}

TEST(FaultInjection, SuffixMatchesWholeComponentsOnly) {
  Tree t;
  Fs fs(t.dir());
  FaultScope faults;
  faults.fail("reclaim", EBUSY);  // not a whole component of ".../memory.reclaim"
  EXPECT_TRUE(fs.write("sys/fs/cgroup/h/bg/memory.reclaim", "1M").ok());
  EXPECT_EQ(Fs::fault_hits("reclaim"), 0);
}

TEST(FaultInjection, TimesLimitsTheFaultThenTheCallGoesThrough) {
  Tree t;
  Fs fs(t.dir());
  FaultScope faults;
  faults.fail("memory.reclaim", EINTR, FsOp::Write, 1);
  Cgroup bg(fs, "sys/fs/cgroup/h/bg");
  EXPECT_EQ(bg.reclaim(96ull << 20).write.err, EINTR);
  EXPECT_TRUE(bg.reclaim(96ull << 20).write.ok());
  EXPECT_EQ(t.get("sys/fs/cgroup/h/bg/memory.reclaim"), "96M");
  EXPECT_EQ(Fs::fault_hits("memory.reclaim"), 1);
}

TEST(FaultInjection, OperationFilterAndReadsThrowTheErrno) {
  Tree t;
  Fs fs(t.dir());
  FaultScope faults;
  faults.fail("bg/memory.current", ENOMEM, FsOp::Read);
  faults.fail("sys/fs/cgroup/h/x", EPERM, FsOp::Mkdir);
  faults.fail("sys/fs/cgroup/h/fg", EBUSY, FsOp::Rmdir);
  Cgroup bg(fs, "sys/fs/cgroup/h/bg");
  try {
    bg.memory_current_bytes();
    ADD_FAILURE() << "no IoError";
  } catch (const IoError& e) {
    EXPECT_EQ(e.err(), ENOMEM);
  }
  EXPECT_EQ(fs.try_read("sys/fs/cgroup/h/bg/memory.current").err, ENOMEM);
  EXPECT_TRUE(fs.write("sys/fs/cgroup/h/bg/memory.current", "1").ok());  // Read-only fault
  EXPECT_EQ(fs.mkdir("sys/fs/cgroup/h/x").err, EPERM);
  EXPECT_FALSE(fs.exists("sys/fs/cgroup/h/x"));
  EXPECT_EQ(fs.rmdir("sys/fs/cgroup/h/fg").err, EBUSY);
  EXPECT_TRUE(fs.is_dir("sys/fs/cgroup/h/fg"));
}

TEST(FaultInjection, SwapCallsAreInjectableAndZeroMeansPretendSuccess) {
  Tree t;
  Fs fs(t.dir());
  FaultScope faults;
  // err 0: the syscall is not made (this test runs as root in CI: a real swapon of a
  // scratch file must never happen).
  faults.fail("/dev/zram0", 0, FsOp::Swapon).fail("/dev/zram0", EBUSY, FsOp::Swapoff);
  faults.fail("/var/lib/harness/swapfile", EPERM, FsOp::Swapon).fail("/dev/zram0", ENOMEM, FsOp::Mkswap);
  EXPECT_TRUE(swapon(fs, "/dev/zram0", 100).ok());
  EXPECT_EQ(swapoff(fs, "/dev/zram0").err, EBUSY);
  EXPECT_EQ(swapon(fs, "/var/lib/harness/swapfile", 10).err, EPERM);
  EXPECT_EQ(mkswap(fs, "/dev/zram0").err, ENOMEM);
  Zram z(fs, 0);
  faults.fail("zram0/disksize", EBUSY, FsOp::Write);
  EXPECT_EQ(z.set_disksize(512ull << 20).err, EBUSY);
  EXPECT_EQ(t.get("sys/block/zram0/disksize"), "0\n");
}

TEST(FaultInjection, ClearedMeansNoEffect) {
  Tree t;
  Fs fs(t.dir());
  Fs::inject_fault("memory.reclaim", EAGAIN);
  Fs::clear_faults();
  EXPECT_TRUE(fs.write("sys/fs/cgroup/h/bg/memory.reclaim", "1M").ok());
  EXPECT_EQ(Fs::fault_hits("memory.reclaim"), 0);
}
