#pragma once
// What runs this (guest) system, detected from inside it the way systemd-detect-virt does
// (ours; a timing claim holds only on kvm or real hardware, so the record must say what
// ran it): DMI strings, the CPUID hypervisor flag, the hypervisor's CPUID vendor leaf and
// the kvm-clock clocksource.
#include <string>

#include "harness/kernel/fs.hpp"

namespace harness::case_ {

/// Inputs of the detection, as read from a system (separate so tests can give fixtures).
struct VirtEvidence {
  std::string sys_vendor, product_name, bios_vendor;  ///< /sys/class/dmi/id/*, trimmed ("" = absent)
  bool hypervisor_flag = false;  ///< "hypervisor" in the flags of /proc/cpuinfo (CPUID.1:ECX bit 31)
  bool kvm_clock = false;        ///< "kvm-clock" in .../clocksource0/available_clocksource (KVM paravirt clock)
  /// CPUID leaf 0x40000000 vendor signature ("KVMKVMKVM", "TCGTCGTCGTCG", "VMwareVMware",
  /// "Microsoft Hv", "XenVMMXenVMM", ...); "" = not read (fixture tree, not x86) or none.
  std::string cpuid_vendor;
};

/// Reads the evidence under `fs`' root: DMI files, proc/cpuinfo, the available clocksources;
/// the CPUID vendor leaf only when the root is the live system "/" on x86-64. Missing files
/// count as absent (a kernel without DMI sysfs), never as an error.
VirtEvidence read_virt_evidence(const harness::kernel::Fs& fs);

/// The accelerator of a case from the evidence: "kvm" (KVM: CPUID says KVM, a DMI string
/// starts with KVM/OpenStack/KubeVirt, or QEMU DMI with kvm-clock available), "tcg" (QEMU
/// DMI or CPUID "TCGTCGTCGTCG" without any KVM sign: QEMU's software emulation), another
/// hypervisor by name (vmware, xen, microsoft, oracle, amazon, google, parallels, bhyve,
/// bochs, apple; "vm-other" for a hypervisor flag with nothing to name it), or "real" (no
/// hypervisor flag and no virtual DMI vendor). Vendor prefixes as in systemd's
/// src/basic/virt.c DMI table.
std::string classify_accelerator(const VirtEvidence& e);

/// classify_accelerator(read_virt_evidence(fs)).
std::string detect_accelerator(const harness::kernel::Fs& fs);

}  // namespace harness::case_
