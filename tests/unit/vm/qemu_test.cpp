// qemu command line (docs/DESIGN.md "Facts measured": measured setup) and guest path helpers.
#include "harness/vm/init_script.hpp"
#include "harness/vm/qemu.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace {
bool has_pair(const std::vector<std::string>& a, const std::string& k, const std::string& v) {
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == k && a[i + 1] == v) return true;
  return false;
}
harness::vm::QemuConfig base() {
  harness::vm::QemuConfig c;
  c.vmlinuz = "/k";
  c.initramfs = "/i";
  c.disk = "/d.img";
  c.console_log = "/c.log";
  c.accelerator = "tcg";
  return c;
}
}  // namespace

TEST(Qemu, DefaultShapeIsTheStudys) {
  auto a = harness::vm::qemu_argv(base());
  EXPECT_TRUE(has_pair(a, "-smp", "1"));
  EXPECT_TRUE(has_pair(a, "-m", "1024"));
  EXPECT_TRUE(has_pair(a, "-machine", "q35"));
  EXPECT_TRUE(has_pair(a, "-accel", "tcg"));
  EXPECT_TRUE(has_pair(a, "-drive", "file=/d.img,format=raw,if=virtio,cache=none"));
  EXPECT_TRUE(has_pair(a, "-serial", "file:/c.log"));
  EXPECT_TRUE(has_pair(a, "-nic", "none"));
}

// The accelerator choose_accelerator() made reaches qemu and the guest: KVM runs the host's
// CPU model and TCG emulates `max`; the guest is told which (harness.accelerator=, what its
// cases record). An accelerator that is not a decision is refused.
TEST(Qemu, TheAcceleratorPicksTheCpuModelAndIsToldToTheGuest) {
  for (const char* accel : {"kvm", "tcg"}) {
    SCOPED_TRACE(accel);
    auto c = base();
    c.accelerator = accel;
    const auto a = harness::vm::qemu_argv(c);
    EXPECT_TRUE(has_pair(a, "-accel", accel));
    EXPECT_TRUE(has_pair(a, "-cpu", std::string(accel) == "kvm" ? "host" : "max"));
    EXPECT_NE(harness::vm::guest_kernel_cmdline(c).find(std::string(" harness.accelerator=") + accel + " "), std::string::npos);
  }
  auto c = base();
  c.accelerator = "auto";  // a request, not a decision
  EXPECT_THROW(harness::vm::qemu_argv(c), std::invalid_argument);
}

TEST(Qemu, AgentPortIsForwardedOnLoopbackOnly) {
  auto c = base();
  c.host_port = 40123;
  auto a = harness::vm::qemu_argv(c);
  EXPECT_TRUE(has_pair(a, "-netdev", "user,id=n0,hostfwd=tcp:127.0.0.1:40123-:8080"));
  EXPECT_TRUE(has_pair(a, "-device", "virtio-net-pci,netdev=n0"));
  auto append = std::find(a.begin(), a.end(), "-append");
  ASSERT_NE(append, a.end());
  EXPECT_NE((append + 1)->find("harness.mode=agent"), std::string::npos);
  EXPECT_NE((append + 1)->find("harness.accelerator=tcg"), std::string::npos);
}

TEST(Qemu, RejectsBadShape) {
  auto c = base();
  c.vcpus = 0;
  EXPECT_THROW(harness::vm::qemu_argv(c), std::invalid_argument);
  c = base();
  c.memory_mib = 64;
  EXPECT_THROW(harness::vm::qemu_argv(c), std::invalid_argument);
  c = base();
  c.disk.clear();
  EXPECT_THROW(harness::vm::qemu_argv(c), std::invalid_argument);
}

TEST(Qemu, FreePortIsUsable) {
  int p = harness::vm::free_local_port();
  EXPECT_GT(p, 0);
  EXPECT_LT(p, 65536);
}

TEST(GuestPaths, DataDiskMapping) {
  EXPECT_EQ(harness::vm::disk_path_of(harness::vm::guest::kTokenFile), "/token");
  EXPECT_EQ(harness::vm::disk_path_of(harness::vm::guest::kOutDir), "/out");
  EXPECT_THROW(harness::vm::disk_path_of("/etc/passwd"), std::invalid_argument);
  EXPECT_THROW(harness::vm::disk_path_of("/var/lib/harnessX/y"), std::invalid_argument);
}

TEST(InitScript, DoesWhatTheGuestNeeds) {
  std::string s = harness::vm::init_script();
  EXPECT_EQ(s.rfind("#!/bin/sh\n", 0), 0u);
  for (const char* needle : {"mount -t cgroup2", "+memory +cpu +io", "insmod", "10.0.2.15/24",
                             "mount -t ext4 /dev/vda", "DATA=/var/lib/harness", "mkswap /var/lib/harness/swapfile",
                             "oom_score_adj", "harness-agent agent --bind 0.0.0.0 --insecure-plain-http --port 8080",
                             "HARNESS-EXEC-STATUS", "poweroff -f"})
    EXPECT_NE(s.find(needle), std::string::npos) << needle;
  EXPECT_EQ(s.find('@'), std::string::npos) << "unreplaced placeholder";
}
