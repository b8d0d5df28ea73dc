// The harness's own zram device (zram_owner.hpp): ownership marker round trip and
// staleness, the spare-device fallback's choice, the bounded EBUSY retry (driven by
// Fs::inject_fault), and the VmSwap holders named when swapoff fails.
#include <gtest/gtest.h>

#include <cerrno>

#include "harness/kernel/errors.hpp"
#include "harness/kernel/swap.hpp"
#include "harness/kernel/zram.hpp"
#include "harness/kernel/zram_owner.hpp"
#include "tmp_tree.hpp"

using namespace harness::kernel;

namespace {

/// A tree with zram0 (initialised, swapped on: foreign), zram1 (unconfigured) and a boot id.
void zram_tree(const kernel_test::TmpTree& t, bool control = true) {
  for (int id : {0, 1}) {
    const std::string d = "sys/block/zram" + std::to_string(id) + "/";
    t.put(d + "initstate", id == 0 ? "1\n" : "0\n");
    t.put(d + "disksize", id == 0 ? "67108864\n" : "0\n");
    t.put(d + "reset", "");
    t.put(d + "comp_algorithm", "lzo [lzo-rle] lz4\n");
  }
  if (control) {
    t.put("sys/class/zram-control/hot_add", "2\n");
    t.put("sys/class/zram-control/hot_remove", "");
  }
  t.put("proc/sys/kernel/random/boot_id", "b00710-1\n");
  t.put("proc/swaps", "Filename Type Size Used Priority\n/dev/zram0 partition 65532 0 -2\n");
  t.put("proc/mounts", "sysfs /sys sysfs rw 0 0\n");
}

BusyRetryPolicy fast_policy() { return BusyRetryPolicy{{1'000'000, 1'000'000, 1'000'000}}; }

}  // namespace

TEST(ZramOwner, MarkerRoundTripAndCurrentness) {
  kernel_test::TmpTree t;
  zram_tree(t);
  Fs fs(t.dir());
  EXPECT_FALSE(read_zram_owner(fs));
  EXPECT_FALSE(owned_zram(fs));
  write_zram_owner(fs, {1, current_boot_id(fs), ZramOrigin::HotAdd});
  EXPECT_EQ(t.get(kZramOwnerFile), "id 1\nboot_id b00710-1\nhow hot_add\n");
  auto o = read_zram_owner(fs);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->id, 1);
  EXPECT_EQ(o->boot_id, "b00710-1");
  EXPECT_EQ(o->how, ZramOrigin::HotAdd);
  ASSERT_TRUE(owned_zram(fs));
  EXPECT_EQ(owned_zram(fs)->id, 1);
  // Another boot: stale, so nothing is owned (the device is somebody else's now).
  t.put("proc/sys/kernel/random/boot_id", "another-boot\n");
  EXPECT_FALSE(zram_owner_current(fs, *o));
  EXPECT_FALSE(owned_zram(fs));
  // Same boot, device gone: stale as well.
  t.put("proc/sys/kernel/random/boot_id", "b00710-1\n");
  write_zram_owner(fs, {7, "b00710-1", ZramOrigin::UnusedDevice});
  EXPECT_EQ(read_zram_owner(fs)->how, ZramOrigin::UnusedDevice);
  EXPECT_FALSE(owned_zram(fs));
  EXPECT_TRUE(remove_zram_owner(fs));
  EXPECT_FALSE(remove_zram_owner(fs));
  EXPECT_FALSE(read_zram_owner(fs));
}

TEST(ZramOwner, MalformedMarkerNamesFileLineAndField) {
  kernel_test::TmpTree t;
  zram_tree(t);
  Fs fs(t.dir());
  t.put(kZramOwnerFile, "id 1\nhow hot_plug\n");
  try {
    read_zram_owner(fs);
    FAIL() << "parsed a bad 'how'";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "how");
    EXPECT_NE(e.file().find("run/reclaim-harness/zram-device"), std::string::npos);
  }
  t.put(kZramOwnerFile, "how hot_add\n");
  EXPECT_THROW(read_zram_owner(fs), ParseError);  // no id
  EXPECT_FALSE(owned_zram(fs));                    // never throws: counts as none
}

TEST(ZramOwner, UnusedDeviceSkipsInitialisedSwappedMountedAndHeld) {
  kernel_test::TmpTree t;
  zram_tree(t, false);
  Fs fs(t.dir());
  ASSERT_EQ(find_unused_zram(fs), std::optional<int>(1));  // zram0 is initialised and swapped on
  t.put("proc/mounts", "/dev/zram1 /var/log ext4 rw 0 0\n");
  EXPECT_FALSE(find_unused_zram(fs));
  t.put("proc/mounts", "");
  t.put("sys/block/zram1/holders/dm-0", "");
  EXPECT_FALSE(find_unused_zram(fs));
  std::filesystem::remove_all(t.dir() / "sys/block/zram1/holders");
  t.put("proc/swaps", "Filename Type Size Used Priority\n/dev/zram1 partition 0 0 -3\n");
  EXPECT_FALSE(find_unused_zram(fs));
  t.put("proc/swaps", "Filename Type Size Used Priority\n");
  t.put("sys/block/zram1/disksize", "4096\n");
  EXPECT_FALSE(find_unused_zram(fs));
}

TEST(ZramOwner, EbusyIsRetriedABoundedNumberOfTimes) {
  kernel_test::TmpTree t;
  zram_tree(t);
  Fs fs(t.dir());
  Zram z(fs, 1);
  {
    FaultScope f;
    f.fail("zram1/reset", EBUSY, FsOp::Write, 2);  // two transient EBUSY, then through
    auto r = retry_on_ebusy([&] { return z.reset(); }, fast_policy());
    EXPECT_TRUE(r.result.ok()) << r.result.message();
    EXPECT_EQ(r.retries, 2);
    EXPECT_EQ(r.waited_ns, 2'000'000);
    EXPECT_EQ(Fs::fault_hits("zram1/reset"), 2);
    EXPECT_EQ(t.get("sys/block/zram1/reset"), "1");  // the third attempt wrote
  }
  {
    FaultScope f;
    f.fail("zram-control/hot_remove", EBUSY, FsOp::Write);  // never clears
    auto r = retry_on_ebusy([&] { return z.hot_remove(); }, fast_policy());
    EXPECT_EQ(r.result.err, EBUSY);
    EXPECT_EQ(r.retries, 3);  // the policy's three delays, then give up
    EXPECT_EQ(Fs::fault_hits("zram-control/hot_remove"), 4);
    EXPECT_NE(r.result.message().find("EBUSY, errno 16"), std::string::npos) << r.result.message();
  }
  {
    FaultScope f;
    f.fail("zram1/reset", ENOMEM, FsOp::Write, 1);  // not EBUSY: no retry
    auto r = retry_on_ebusy([&] { return z.reset(); }, fast_policy());
    EXPECT_EQ(r.result.err, ENOMEM);
    EXPECT_EQ(r.retries, 0);
  }
  EXPECT_EQ(BusyRetryPolicy{}.delays_ns.size(), 6u);  // the default bound
}

TEST(SwapHolders, VmSwapHoldersAreListedLargestFirstWithStateAndCgroup) {
  kernel_test::TmpTree t;
  t.put("proc/1/status", "Name:\tinit\nState:\tS (sleeping)\nVmSwap:\t       0 kB\n");
  t.put("proc/812/status", "Name:\tpressure-gen\nState:\tT (stopped)\nVmSwap:\t   24576 kB\n");
  t.put("proc/812/cgroup", "0::/holder\n");
  t.put("proc/900/status", "Name:\tsqlite\nState:\tS (sleeping)\nVmSwap:\t    1024 kB\n");
  t.put("proc/900/cgroup", "0::/system.slice/x.service\n");
  t.put("proc/self/status", "Name:\tnot-a-pid\nVmSwap:\t 9 kB\n");
  t.put("proc/2/status", "Name:\tkthreadd\nState:\tS (sleeping)\n");  // kernel thread: no VmSwap
  Fs fs(t.dir());
  auto h = swap_holders(fs);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].pid, 812);
  EXPECT_EQ(h[0].name, "pressure-gen");
  EXPECT_EQ(h[0].state, "T (stopped)");
  EXPECT_EQ(h[0].vm_swap_kib, 24576u);
  EXPECT_EQ(h[0].cgroup, "/holder");
  EXPECT_EQ(h[1].pid, 900);
  EXPECT_EQ(describe_swap_holders(h, 1), "pid 812 pressure-gen (T (stopped), cgroup /holder) 24576 KiB; + 1 more");
  EXPECT_NE(describe_swap_holders({}).find("no process has VmSwap > 0"), std::string::npos);
}

TEST(Swapfile, FixLinesQuoteThePath) {
  kernel_test::TmpTree t;
  Fs fs(t.dir());
  auto c = validate_swapfile(fs, "/var/lib/x; rm -rf /");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.problems[0].find("of='/var/lib/x; rm -rf /' bs=1M"), std::string::npos) << c.problems[0];
  EXPECT_NE(c.problems[0].find("mkswap '/var/lib/x; rm -rf /'"), std::string::npos) << c.problems[0];
  EXPECT_EQ(c.problems[0].find("of=/var/lib/x;"), std::string::npos) << c.problems[0];
}

TEST(Errors, ErrnoNameIsSymbolic) {
  EXPECT_EQ(errno_name(ENOMEM), "ENOMEM");
  EXPECT_EQ(errno_name(EBUSY), "EBUSY");
  EXPECT_EQ(errno_name(0), "0");
  WriteResult w{ENOMEM, "/dev/zram1"};
  EXPECT_EQ(w.message(), "/dev/zram1: Cannot allocate memory (ENOMEM, errno 12)");
}
