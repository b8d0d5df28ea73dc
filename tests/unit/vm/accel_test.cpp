// Accelerator choice by trial boot (harness/vm/accel.hpp), against a fake
// qemu-system-x86_64 put first on PATH. The fake behaves like the broken nested-KVM hosts
// seen here: under `-accel kvm` it either aborts at once (the MSR 0x10a assertion) or stays
// silent; it counts its invocations so the cache can be checked. What the host itself says
// (check_kvm_host: nested PVM, no vmx/svm) is read from fixture trees under the test's
// temp dir (AccelRequest::host_root); one test reads the real machine's "/".
#include "harness/vm/accel.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

/// check_kvm_host's Problem, nullopt when the host says nothing against KVM.
std::optional<std::string> kvm_host_obstacle(const std::string& root) {
  const auto host = harness::vm::check_kvm_host(root);
  if (host) return std::nullopt;
  return host.error().message;
}

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
    // The host root of the probe tests: a CPU with vmx, no kvm_pvm (nothing rules KVM out).
    host_root("root", kVmxCpuinfo, false);
    old_path_ = std::getenv("PATH") ? std::getenv("PATH") : "";
    ::setenv("PATH", ((dir_ / "bin").string() + ":" + old_path_).c_str(), 1);
    ::unsetenv("HARNESS_ACCEL");
  }
  void TearDown() override {
    ::setenv("PATH", old_path_.c_str(), 1);
    ::unsetenv("HARNESS_ACCEL");
    fs::remove_all(dir_);
  }

  static constexpr const char* kVmxCpuinfo =
      "processor\t: 0\nvendor_id\t: GenuineIntel\n"
      "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep vmx ssse3 hypervisor lahf_lm\n"
      "vmx flags\t: vnmi preemption_timer invvpid ept_x_only\n\n"
      "processor\t: 1\nvendor_id\t: GenuineIntel\n"
      "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep vmx ssse3 hypervisor lahf_lm\n\n";
  // As measured on this machine under nested PVM: no vmx, no svm (svm_lock-like names must not count).
  static constexpr const char* kNoVirtCpuinfo =
      "processor\t: 0\nvendor_id\t: GenuineIntel\n"
      "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep ssse3 hypervisor lahf_lm svm_lock vmx_fake\n\n"
      "processor\t: 1\nvendor_id\t: GenuineIntel\n"
      "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep ssse3 hypervisor lahf_lm\n\n";

  /// A fixture host root dir_/name: proc/cpuinfo with `cpuinfo` (nullptr = no such file),
  /// sys/module/kvm_pvm/parameters when `pvm`. Returns its path.
  std::string host_root(const std::string& name, const char* cpuinfo, bool pvm) {
    const fs::path r = dir_ / name;
    fs::create_directories(r / "proc");
    fs::create_directories(r / "sys/module/kvm");
    if (cpuinfo) std::ofstream(r / "proc/cpuinfo") << cpuinfo;
    if (pvm) fs::create_directories(r / "sys/module/kvm_pvm/parameters");
    return r.string();
  }

  /// Writes the fake qemu. `kvm_behaviour`: abort | silent | banner | forbidden (any run,
  /// even --version, is recorded in `calls` and fails: the host check must not start qemu).
  void fake_qemu(const std::string& kvm_behaviour) {
    const fs::path p = dir_ / "bin" / "qemu-system-x86_64";
    std::ofstream f(p);
    f << "#!/bin/sh\n";
    if (kvm_behaviour == "forbidden")
      f << "echo \"forbidden $*\" >> " << (dir_ / "calls").string() << "\n"
        << "echo 'qemu must not run when the host rules KVM out' >&2\nexit 99\n";
    f << "if [ \"$1\" = --version ]; then echo 'QEMU emulator version 7.2.0 (fake)'; exit 0; fi\n"
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
    r.host_root = (dir_ / "root").string();
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
  EXPECT_GE(first.trial_s, 0);     // the trial that ran is timed (harness/pool/host_costs.hpp keeps it)
  EXPECT_EQ(second.trial_s, -1);   // none ran
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

// The one key rule of cached KVM verdicts (local guests and libvirt hosts): a verdict is
// read back only for the very key it was written for; any part that changes is another key.
TEST_F(AccelTest, AVerdictIsReusedOnlyForItsOwnKey) {
  harness::vm::ProbeKey k{"qemu+ssh://hv2/system", "", "libvirt 9000000", "qemu 7002000 /usr/bin/qemu-system-x86_64", "",
                          "abc"};
  const std::string file = (dir_ / "machine" / k.file_name()).string();
  EXPECT_EQ(k.file_name().rfind("accel-probe-", 0), 0u);
  EXPECT_FALSE(harness::vm::read_probe_verdict(file, k));
  harness::vm::write_probe_verdict(file, k, {true, "banner after 2.0 s", 2.5, 1764892800});
  const auto v = harness::vm::read_probe_verdict(file, k);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->kvm_ok);
  EXPECT_EQ(v->detail, "banner after 2.0 s");
  EXPECT_DOUBLE_EQ(v->trial_s, 2.5);
  EXPECT_EQ(v->measured_unix, 1764892800);
  for (auto part : {&harness::vm::ProbeKey::host, &harness::vm::ProbeKey::boot, &harness::vm::ProbeKey::hypervisor,
                    &harness::vm::ProbeKey::qemu, &harness::vm::ProbeKey::kvm_device,
                    &harness::vm::ProbeKey::kernel_sha256}) {
    auto other = k;
    other.*part += "x";
    EXPECT_NE(other.file_name(), k.file_name());
    EXPECT_FALSE(harness::vm::read_probe_verdict(file, other)) << other.text();  // the same file, another key
  }
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

constexpr const char* kPvmReason = "/dev/kvm is nested PVM: a stock guest kernel cannot run under it";
constexpr const char* kNoFlagReason = "/dev/kvm is present but the CPU has no vmx or svm flag: ";

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

TEST_F(AccelTest, NestedPvmGivesTcgWithoutStartingQemu) {
  fake_qemu("forbidden");
  auto r = request("auto");
  r.host_root = host_root("pvm-root", kNoVirtCpuinfo, true);
  const auto c = harness::vm::choose_accelerator(r);
  EXPECT_EQ(c.accelerator, "tcg");
  EXPECT_TRUE(starts_with(c.reason, std::string("auto: ") + kPvmReason)) << c.reason;
  EXPECT_NE(c.reason.find(r.host_root + "/sys/module/kvm_pvm exists"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("CONFIG_PVM_GUEST"), std::string::npos) << c.reason;
  EXPECT_TRUE(ends_with(c.reason, "; using TCG")) << c.reason;
  EXPECT_EQ(c.reason.find('\n'), std::string::npos) << c.reason;  // one line
  EXPECT_FALSE(c.from_cache);
  EXPECT_EQ(calls(), 0);  // no probe, not even qemu --version
  EXPECT_FALSE(fs::exists(dir_ / "cache" / "accel-probe.json"));
  // kvm_pvm wins even when cpuinfo shows vmx.
  const auto v = kvm_host_obstacle(host_root("pvm-vmx-root", kVmxCpuinfo, true));
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(starts_with(*v, kPvmReason)) << *v;
}

TEST_F(AccelTest, NoVmxOrSvmFlagGivesTcgWithoutStartingQemu) {
  fake_qemu("forbidden");
  auto r = request("auto");
  r.host_root = host_root("novirt-root", kNoVirtCpuinfo, false);
  const auto c = harness::vm::choose_accelerator(r);
  EXPECT_EQ(c.accelerator, "tcg");
  EXPECT_TRUE(starts_with(c.reason, std::string("auto: ") + kNoFlagReason)) << c.reason;
  EXPECT_NE(c.reason.find(r.host_root + "/proc/cpuinfo"), std::string::npos) << c.reason;
  EXPECT_TRUE(ends_with(c.reason, "; using TCG")) << c.reason;
  EXPECT_EQ(calls(), 0);
  // An explicit kvm is refused at once with the same reason.
  r.requested = "kvm";
  try {
    harness::vm::choose_accelerator(r);
    FAIL() << "expected AccelError";
  } catch (const harness::vm::AccelError& e) {
    EXPECT_TRUE(starts_with(e.what(), std::string("--accel kvm: ") + kNoFlagReason)) << e.what();
  }
  EXPECT_EQ(calls(), 0);
}

TEST_F(AccelTest, VmxWithoutPvmFallsThroughToTheTrialBoot) {
  fake_qemu("abort");
  auto r = request("auto");
  EXPECT_FALSE(kvm_host_obstacle(r.host_root).has_value());
  const auto c = harness::vm::choose_accelerator(r);
  EXPECT_EQ(c.accelerator, "tcg");
  EXPECT_NE(c.reason.find("qemu exited with status 134"), std::string::npos) << c.reason;
  EXPECT_EQ(calls(), 1);  // the probe ran, as before the check existed
  // An svm CPU is as good as a vmx one.
  EXPECT_FALSE(kvm_host_obstacle(
                   host_root("svm-root", "processor\t: 0\nflags\t\t: fpu svm lahf_lm\n", false))
                   .has_value());
}

TEST_F(AccelTest, UnreadableCpuinfoIsNotNoFlagsAndFallsThroughToTheTrialBoot) {
  fake_qemu("banner");
  // missing file
  auto r = request("auto");
  r.host_root = host_root("missing-root", nullptr, false);
  EXPECT_FALSE(kvm_host_obstacle(r.host_root).has_value());
  const auto c = harness::vm::choose_accelerator(r);
  EXPECT_EQ(c.accelerator, "kvm") << c.reason;  // the fake qemu printed the banner
  EXPECT_NE(c.reason.find("printed the kernel banner"), std::string::npos) << c.reason;
  EXPECT_EQ(calls(), 1);
  // a cpuinfo that opens but cannot be read (a directory: read() fails with EISDIR)
  const std::string dir_root = host_root("eisdir-root", nullptr, false);
  fs::create_directories(fs::path(dir_root) / "proc/cpuinfo");
  EXPECT_FALSE(kvm_host_obstacle(dir_root).has_value());
  // and one without any `flags` line says nothing either
  EXPECT_FALSE(kvm_host_obstacle(host_root("noflags-root", "processor\t: 0\n", false)).has_value());
  EXPECT_FALSE(kvm_host_obstacle(host_root("empty-root", "", false)).has_value());
}

TEST_F(AccelTest, ExplicitKvmUnderNestedPvmIsAnErrorNamingPvm) {
  fake_qemu("forbidden");
  auto r = request("kvm");
  r.host_root = host_root("pvm-root", kNoVirtCpuinfo, true);
  try {
    harness::vm::choose_accelerator(r);
    FAIL() << "expected AccelError";
  } catch (const harness::vm::AccelError& e) {
    const std::string m = e.what();
    EXPECT_TRUE(starts_with(m, std::string("--accel kvm: ") + kPvmReason)) << m;
    EXPECT_NE(m.find("(use --accel tcg or auto)"), std::string::npos) << m;
  }
  EXPECT_EQ(calls(), 0);
  // tcg never looks.
  r.requested = "tcg";
  EXPECT_EQ(harness::vm::choose_accelerator(r).reason, "tcg requested");
  EXPECT_EQ(calls(), 0);
}

// The real machine's "/": the verdict must follow the facts this test reads itself.
TEST_F(AccelTest, TheRealMachineVerdictFollowsItsFacts) {
  const bool pvm = fs::exists("/sys/module/kvm_pvm");
  std::ifstream in("/proc/cpuinfo");
  bool readable = static_cast<bool>(in), flags_line = false, virt = false;
  for (std::string line; readable && std::getline(in, line);) {
    if (line.rfind("flags", 0) != 0 || line.find(':') == std::string::npos) continue;
    std::string key = line.substr(0, line.find(':'));
    if (key.find_first_not_of(" \t", 5) != std::string::npos) continue;  // "flags" and blanks only
    flags_line = true;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string w; words >> w;) virt = virt || w == "vmx" || w == "svm";
  }
  const auto v = kvm_host_obstacle("/");
  std::printf("this machine: /sys/module/kvm_pvm %s, cpuinfo %s, vmx/svm %s -> %s\n", pvm ? "exists" : "absent",
              readable ? "readable" : "unreadable", virt ? "present" : "absent", v ? v->c_str() : "(no obstacle)");
  if (pvm) {
    ASSERT_TRUE(v.has_value());
    EXPECT_TRUE(starts_with(*v, "/dev/kvm is nested PVM: a stock guest kernel cannot run under it (/sys/module/kvm_pvm exists"))
        << *v;
  } else if (readable && flags_line && !virt) {
    ASSERT_TRUE(v.has_value());
    EXPECT_TRUE(starts_with(*v, std::string(kNoFlagReason) + "the flags lines of /proc/cpuinfo")) << *v;
  } else {
    EXPECT_FALSE(v.has_value()) << *v;
  }
  // choose_accelerator on this machine's root (the device stand-in opens, so the check is
  // what decides; a probe, when nothing rules KVM out, meets the banner-printing fake).
  fake_qemu(v ? "forbidden" : "banner");
  auto r = request("auto");
  r.host_root = "/";
  const auto c = harness::vm::choose_accelerator(r);
  std::printf("choose_accelerator(auto, host_root /): %s\n", c.message().c_str());
  if (v) {
    EXPECT_EQ(c.accelerator, "tcg");
    EXPECT_EQ(c.reason, "auto: " + *v + "; using TCG");
    EXPECT_EQ(calls(), 0);
  } else {
    EXPECT_EQ(c.accelerator, "kvm") << c.reason;
    EXPECT_EQ(calls(), 1);
  }
  // The default request reads "/" too.
  EXPECT_EQ(harness::vm::AccelRequest{}.host_root, "/");
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
