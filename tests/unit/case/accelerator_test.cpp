// Accelerator detection inside the guest (real VMs record what ran them):
// DMI + CPUID hypervisor flag + kvm-clock fixtures for KVM, TCG and bare metal; the
// precedence flag > harness.accelerator= > detection; and one free-disk threshold for
// `harness qualify` and the case.
#include "harness/case/accelerator_detect.hpp"
#include "harness/case/environment.hpp"
#include "harness/case/executor.hpp"
#include "qualify/qualify.hpp"

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

// A VM that passes `harness qualify` must not then have every case refused.
TEST(FreeDiskThreshold, QualifyAndTheCaseDemandTheSameFreeSpace) {
  EXPECT_EQ(qualify::Options{}.min_free_disk_bytes, harness::case_::ExecutorOptions{}.min_free_disk_bytes);
  EXPECT_EQ(qualify::Options{}.min_free_disk_bytes, qualify::kMinFreeDiskMiB << 20);
}
