// Accelerator detection inside the guest (real VMs record what ran them):
// DMI + CPUID hypervisor flag + kvm-clock fixtures for KVM, TCG and bare metal; the
// precedence flag > harness.accelerator= > detection; what a whole case records from it
// (cases.accelerator, outcome timing_claims_valid: the KVM branch without KVM, from a guest
// tree that reports kvm); and one free-disk threshold for `harness qualify` and the case.
#include "harness/case/host/accelerator_detect.hpp"
#include "harness/case/host/environment.hpp"
#include "harness/case/run/executor.hpp"
#include "qualify/qualify.hpp"
#include "results/db.hpp"
#include "tests/unit/case/case_scratch.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace {
const std::string kVirt = "tests/unit/case/fixtures/virt/";
}  // namespace

TEST(AcceleratorDetect, FixturesOfKvmTcgAndBareMetal) {
  const auto kvm = harness::case_::read_virt_evidence(harness::kernel::Fs(kVirt + "kvm"));
  EXPECT_EQ(kvm.sys_vendor, "QEMU");  // trimmed
  EXPECT_EQ(kvm.bios_vendor, "SeaBIOS");
  EXPECT_TRUE(kvm.hypervisor_flag);
  EXPECT_TRUE(kvm.kvm_clock);
  EXPECT_EQ(kvm.cpuid_vendor, "");  // a fixture tree never reads the host's CPUID
  EXPECT_EQ(harness::case_::detect_accelerator(harness::kernel::Fs(kVirt + "kvm")), "kvm");

  const auto tcg = harness::case_::read_virt_evidence(harness::kernel::Fs(kVirt + "tcg"));
  EXPECT_TRUE(tcg.hypervisor_flag);
  EXPECT_FALSE(tcg.kvm_clock);
  EXPECT_EQ(harness::case_::detect_accelerator(harness::kernel::Fs(kVirt + "tcg")), "tcg");

  const auto metal = harness::case_::read_virt_evidence(harness::kernel::Fs(kVirt + "metal"));
  EXPECT_FALSE(metal.hypervisor_flag);
  EXPECT_EQ(metal.product_name, "PowerEdge R640");
  EXPECT_EQ(harness::case_::detect_accelerator(harness::kernel::Fs(kVirt + "metal")), "real");
}

TEST(AcceleratorDetect, AcceleratorFromPrefersTheFlagThenTheCommandLineThenDetection) {
  EXPECT_EQ(harness::case_::accelerator_from(harness::kernel::Fs(kVirt + "tcg"), ""), "tcg");  // no proc/cmdline: detected
  EXPECT_EQ(harness::case_::accelerator_from(harness::kernel::Fs(kVirt + "tcg"), "kvm"), "kvm");
  const auto dir = std::filesystem::temp_directory_path() / ("accel-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "proc");
  std::filesystem::copy(kVirt + "metal", dir, std::filesystem::copy_options::recursive |
                                                  std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir / "proc/cmdline") << "console=ttyS0 harness.accelerator=tcg quiet\n";
  EXPECT_EQ(harness::case_::accelerator_from(harness::kernel::Fs(dir), ""), "tcg");
  std::filesystem::remove(dir / "proc/cmdline");
  EXPECT_EQ(harness::case_::accelerator_from(harness::kernel::Fs(dir), ""), "real");
  std::filesystem::remove_all(dir);
}

TEST(AcceleratorDetect, OtherHypervisorsByNameAndCpuidFirst) {
  harness::case_::VirtEvidence e;
  e.hypervisor_flag = true;
  e.sys_vendor = "VMware, Inc.";
  EXPECT_EQ(harness::case_::classify_accelerator(e), "vmware");
  e.sys_vendor = "Microsoft Corporation";
  e.product_name = "Virtual Machine";
  EXPECT_EQ(harness::case_::classify_accelerator(e), "microsoft");
  e = {};
  e.hypervisor_flag = true;
  e.sys_vendor = "Amazon EC2";
  EXPECT_EQ(harness::case_::classify_accelerator(e), "amazon");
  e.sys_vendor = "innotek GmbH";
  EXPECT_EQ(harness::case_::classify_accelerator(e), "oracle");
  e.sys_vendor = "QEMU";
  e.cpuid_vendor = "KVMKVMKVM";  // CPUID decides before DMI and clocksources
  EXPECT_EQ(harness::case_::classify_accelerator(e), "kvm");
  e.cpuid_vendor = "TCGTCGTCGTCG";
  e.kvm_clock = true;
  EXPECT_EQ(harness::case_::classify_accelerator(e), "tcg");
  e = {};
  e.hypervisor_flag = true;  // a hypervisor with nothing that names it
  EXPECT_EQ(harness::case_::classify_accelerator(e), "vm-other");
  e = {};
  EXPECT_EQ(harness::case_::classify_accelerator(e), "real");
}

// The executor's record of what ran the case, from the guest's own report: detection over a
// guest tree (the virt fixtures copied onto the scratch capture), the harness.accelerator=
// that local-qemu and libvirt guests are booted with, and the flag. Timing claims hold only
// for kvm and real hardware (docs/DESIGN.md "Processes and data flow"). The case fails at its
// first cgroup (a fault): the record is made before anything of the case exists.
TEST(AcceleratorDetect, TheCaseRecordsTheAcceleratorAndWhetherTimingClaimsHold) {
  struct Row {
    const char* evidence;  // fixtures/virt/<evidence> over the capture
    const char* cmdline;   // proc/cmdline of the guest
    const char* flag;      // ExecutorOptions::accelerator
    const char* accelerator;
    bool timing_claims_valid;
  };
  const Row rows[] = {
      {"kvm", "console=ttyS0 quiet panic=-1\n", "", "kvm", true},
      {"tcg", "console=ttyS0 quiet panic=-1\n", "", "tcg", false},
      {"metal", "console=ttyS0 quiet panic=-1\n", "", "real", true},
      {"tcg", "console=ttyS0 harness.accelerator=kvm panic=-1\n", "", "kvm", true},
      {"kvm", "console=ttyS0 harness.accelerator=kvm panic=-1\n", "tcg", "tcg", false},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(std::string(row.evidence) + " / " + row.cmdline + " / flag '" + row.flag + "'");
    case_test::Scratch t;
    std::filesystem::copy(kVirt + row.evidence, t.root(),
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
    t.put("proc/cmdline", row.cmdline);
    harness::kernel::FaultScope f;
    f.fail("sys/fs/cgroup/harness", EPERM, harness::kernel::FsOp::Mkdir);
    auto o = case_test::executor_host(t);
    o.accelerator = row.flag;
    case_test::stub_swap(f);
    const auto r = harness::case_::run_case(case_test::executor_spec(t, "accel-record"), o);
    EXPECT_EQ(r.status, "infra_failed") << r.error;
    const auto outcome = case_test::bundle_outcome(r.bundle_path);
    ASSERT_TRUE(outcome.is_object()) << r.bundle_path;
    ASSERT_TRUE(outcome.contains("timing_claims_valid")) << outcome.dump(2);
    EXPECT_EQ(outcome.at("timing_claims_valid").get<bool>(), row.timing_claims_valid);
    results::Db db(r.bundle_path, results::Db::Mode::ReadOnly);
    results::Stmt c(db, "SELECT accelerator, json_extract(environment_json, '$.accelerator') FROM cases");
    ASSERT_TRUE(c.step());
    EXPECT_EQ(c.text(0), row.accelerator);
    EXPECT_EQ(c.text(1), row.accelerator);
  }
}

// A VM that passes `harness qualify` must not then have every case refused.
TEST(FreeDiskThreshold, QualifyAndTheCaseDemandTheSameFreeSpace) {
  EXPECT_EQ(qualify::Options{}.min_free_disk_bytes, harness::case_::ExecutorOptions{}.min_free_disk_bytes);
  EXPECT_EQ(qualify::Options{}.min_free_disk_bytes, qualify::kMinFreeDiskMiB << 20);
}
