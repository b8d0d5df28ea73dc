// Accelerator choice by trial boot (harness/vm/accel.hpp), against a fake
// qemu-system-x86_64 put first on PATH. The fake behaves like the broken nested-KVM hosts
// seen here: under `-accel kvm` it either aborts at once (the MSR 0x10a assertion) or stays
// silent; it counts its invocations so the cache can be checked.
#include "harness/vm/accel.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

class AccelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/accel-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ / "bin");
    fs::create_directories(dir_ / "cache");
    std::ofstream(dir_ / "vmlinuz") << "not a kernel";
    std::ofstream(dir_ / "kvm") << "";  // a device stand-in that opens read-write
    old_path_ = std::getenv("PATH") ? std::getenv("PATH") : "";
    ::setenv("PATH", ((dir_ / "bin").string() + ":" + old_path_).c_str(), 1);
    ::unsetenv("HARNESS_ACCEL");
  }
  void TearDown() override {
    ::setenv("PATH", old_path_.c_str(), 1);
    ::unsetenv("HARNESS_ACCEL");
    fs::remove_all(dir_);
  }

  /// Writes the fake qemu. `kvm_behaviour`: abort | silent | banner.
  void fake_qemu(const std::string& kvm_behaviour) {
    const fs::path p = dir_ / "bin" / "qemu-system-x86_64";
    std::ofstream f(p);
    f << "#!/bin/sh\n"
      << "if [ \"$1\" = --version ]; then echo 'QEMU emulator version 7.2.0 (fake)'; exit 0; fi\n"
      << "echo run >> " << (dir_ / "calls").string() << "\n"
      << "serial=''\n"
      << "for a in \"$@\"; do case \"$a\" in file:*) serial=${a#file:};; esac; done\n";
    if (kvm_behaviour == "abort")
      f << "echo 'qemu-system-x86_64: ../target/i386/kvm/kvm.c:2893: kvm_buf_set_msrs: Assertion failed: "
           "failed to set MSR 0x10a' >&2\nexit 134\n";
    else if (kvm_behaviour == "silent")
      f << "exec sleep 30\n";
    else
      f << "printf 'Linux version 6.1.0-57-cloud-amd64 (fake)\\n' > \"$serial\"\nexec sleep 30\n";
    f.close();
    fs::permissions(p, fs::perms::owner_all);
  }

  int calls() const {
    std::ifstream in(dir_ / "calls");
    int n = 0;
    std::string line;
    while (std::getline(in, line)) ++n;
    return n;
  }

  harness::vm::AccelRequest request(const std::string& want) const {
    harness::vm::AccelRequest r;
    r.requested = want;
    r.vmlinuz = (dir_ / "vmlinuz").string();
    r.cache_dir = (dir_ / "cache").string();
    r.machine_cache_dir = (dir_ / "machine").string();
    r.kvm_device = (dir_ / "kvm").string();
    r.timeout_s = 2;
    return r;
  }

  fs::path dir_;
  std::string old_path_;
};

TEST_F(AccelTest, AutoFallsBackToTcgWhenQemuAbortsUnderKvm) {
  fake_qemu("abort");
  const auto c = harness::vm::choose_accelerator(request("auto"));
  EXPECT_EQ(c.accelerator, "tcg");
  EXPECT_NE(c.reason.find("qemu exited with status 134"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("failed to set MSR 0x10a"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("falling back to TCG"), std::string::npos) << c.reason;
  EXPECT_NE(c.message().find("accelerator: tcg"), std::string::npos);
  EXPECT_NE(c.message().find("WARNING"), std::string::npos);  // the TCG timing warning
  EXPECT_FALSE(c.from_cache);
  EXPECT_EQ(calls(), 1);
}

TEST_F(AccelTest, AutoFallsBackToTcgWhenTheGuestStaysSilent) {
  fake_qemu("silent");
  const auto c = harness::vm::choose_accelerator(request("auto"));
  EXPECT_EQ(c.accelerator, "tcg");
  EXPECT_NE(c.reason.find("printed nothing on the serial console within 2 s"), std::string::npos) << c.reason;
}

TEST_F(AccelTest, ExplicitKvmThatCannotRunAGuestIsAClearError) {
  fake_qemu("abort");
  try {
    harness::vm::choose_accelerator(request("kvm"));
    FAIL() << "expected AccelError";
  } catch (const harness::vm::AccelError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--accel kvm"), std::string::npos) << m;
    EXPECT_NE(m.find("opens but cannot run a guest"), std::string::npos) << m;
    EXPECT_NE(m.find("status 134"), std::string::npos) << m;
  }
}

TEST_F(AccelTest, ExplicitKvmWithoutTheDeviceIsAClearError) {
  fake_qemu("banner");
  auto r = request("kvm");
  r.kvm_device = (dir_ / "no-such-kvm").string();
  EXPECT_THROW(harness::vm::choose_accelerator(r), harness::vm::AccelError);
  r.requested = "auto";
  const auto c = harness::vm::choose_accelerator(r);
  EXPECT_EQ(c.accelerator, "tcg");
  EXPECT_NE(c.reason.find("No such file or directory"), std::string::npos) << c.reason;
  EXPECT_EQ(calls(), 0);  // no probe without a device
}

TEST_F(AccelTest, KvmIsChosenWhenTheKernelBannerAppears) {
  fake_qemu("banner");
  const auto c = harness::vm::choose_accelerator(request("auto"));
  EXPECT_EQ(c.accelerator, "kvm");
  EXPECT_NE(c.reason.find("printed the kernel banner"), std::string::npos) << c.reason;
  EXPECT_EQ(c.message().find("WARNING"), std::string::npos);
}

TEST_F(AccelTest, TheProbeResultIsCachedPerBootAndQemuVersion) {
  fake_qemu("abort");
  const auto first = harness::vm::choose_accelerator(request("auto"));
  const auto second = harness::vm::choose_accelerator(request("auto"));
  EXPECT_EQ(first.accelerator, "tcg");
  EXPECT_EQ(second.accelerator, "tcg");
  EXPECT_FALSE(first.from_cache);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(calls(), 1);  // the second decision booted nothing
  // An explicit kvm request still fails from the cached result, without a silent fallback.
  EXPECT_THROW(harness::vm::choose_accelerator(request("kvm")), harness::vm::AccelError);
  EXPECT_EQ(calls(), 1);
}

TEST_F(AccelTest, CacheRootsOfOneMachineShareOneProbeOfTheSameKernelBytes) {
  fake_qemu("abort");
  auto a = request("auto");
  auto b = request("auto");
  b.cache_dir = (dir_ / "other-cache").string();
  // Another image directory holding a byte-identical copy of the kernel.
  fs::create_directories(dir_ / "other-image");
  fs::copy_file(dir_ / "vmlinuz", dir_ / "other-image" / "vmlinuz");
  b.vmlinuz = (dir_ / "other-image" / "vmlinuz").string();
  const auto first = harness::vm::choose_accelerator(a);
  const auto second = harness::vm::choose_accelerator(b);
  EXPECT_FALSE(first.from_cache);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.accelerator, "tcg");
  EXPECT_EQ(second.reason, first.reason);
  EXPECT_EQ(calls(), 1);
  EXPECT_TRUE(fs::exists(dir_ / "other-cache" / "accel-probe.json"));  // copied into the second root
  // A kernel with other bytes is probed again.
  std::ofstream(dir_ / "other-image" / "vmlinuz") << "another kernel";
  b.cache_dir = (dir_ / "third-cache").string();
  const auto third = harness::vm::choose_accelerator(b);
  EXPECT_FALSE(third.from_cache);
  EXPECT_EQ(calls(), 2);
  // "-" turns the machine-wide cache off.
  a.cache_dir = "";
  a.machine_cache_dir = "-";
  EXPECT_FALSE(harness::vm::choose_accelerator(a).from_cache);
  EXPECT_EQ(calls(), 3);
}

TEST_F(AccelTest, MachineProbeDirHonoursTheEnvironment) {
  ::setenv("HARNESS_ACCEL_PROBE_DIR", (dir_ / "env-dir").c_str(), 1);
  EXPECT_EQ(harness::vm::machine_probe_dir(), (dir_ / "env-dir").string());
  ::unsetenv("HARNESS_ACCEL_PROBE_DIR");
  EXPECT_FALSE(harness::vm::machine_probe_dir().empty());
}

TEST_F(AccelTest, TcgNeverProbes) {
  fake_qemu("banner");
  const auto c = harness::vm::choose_accelerator(request("tcg"));
  EXPECT_EQ(c.accelerator, "tcg");
  EXPECT_EQ(c.reason, "tcg requested");
  EXPECT_EQ(calls(), 0);
}

TEST_F(AccelTest, RequestPrecedenceFlagThenEnvironmentThenCampaign) {
  EXPECT_EQ(harness::vm::effective_accel_request("", ""), "auto");
  EXPECT_EQ(harness::vm::effective_accel_request("", "kvm"), "kvm");
  ::setenv("HARNESS_ACCEL", "tcg", 1);
  EXPECT_EQ(harness::vm::effective_accel_request("", "kvm"), "tcg");
  EXPECT_EQ(harness::vm::effective_accel_request("kvm", "auto"), "kvm");
  ::setenv("HARNESS_ACCEL", "fast", 1);
  try {
    harness::vm::effective_accel_request("", "");
    FAIL() << "expected AccelError";
  } catch (const harness::vm::AccelError& e) {
    EXPECT_STREQ(e.what(), "environment variable HARNESS_ACCEL: accelerator 'fast' is not one of auto, kvm, tcg");
  }
}

}  // namespace
