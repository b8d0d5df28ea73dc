// Accelerator detection from inside the guest (see accelerator_detect.hpp).
#include "harness/case/host/accelerator_detect.hpp"

#include <array>
#include <cstring>
#include <sstream>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace harness::case_ {
namespace {

std::string trimmed(const harness::kernel::Fs& fs, const char* rel) {
  const auto r = fs.try_read(rel);
  if (!r.ok()) return "";
  std::string s = r.text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

bool has_word(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  for (std::string w; in >> w;)
    if (w == word) return true;
  return false;
}

std::string cpuid_vendor() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid(1, a, b, c, d);
  if (!(c & (1u << 31))) return "";  // no hypervisor: leaf 0x40000000 means nothing
  __cpuid(0x40000000, a, b, c, d);
  char sig[13] = {};
  std::memcpy(sig, &b, 4);
  std::memcpy(sig + 4, &c, 4);
  std::memcpy(sig + 8, &d, 4);
  return std::string(sig, strnlen(sig, 12));
#else
  return "";
#endif
}

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

}  // namespace

VirtEvidence read_virt_evidence(const harness::kernel::Fs& fs) {
  VirtEvidence e;
  e.sys_vendor = trimmed(fs, "sys/class/dmi/id/sys_vendor");
  e.product_name = trimmed(fs, "sys/class/dmi/id/product_name");
  e.bios_vendor = trimmed(fs, "sys/class/dmi/id/bios_vendor");
  const auto cpu = fs.try_read("proc/cpuinfo");
  if (cpu.ok()) {
    std::istringstream in(cpu.text);
    for (std::string line; std::getline(in, line);)
      if (starts_with(line, "flags")) {
        const auto colon = line.find(':');
        if (colon != std::string::npos && has_word(line.substr(colon + 1), "hypervisor")) e.hypervisor_flag = true;
        break;
      }
  }
  e.kvm_clock = has_word(trimmed(fs, "sys/devices/system/clocksource/clocksource0/available_clocksource"), "kvm-clock");
  if (fs.root() == "/") e.cpuid_vendor = cpuid_vendor();
  return e;
}

std::string classify_accelerator(const VirtEvidence& e) {
  // 1. The hypervisor's own CPUID signature (systemd-detect-virt's first source).
  static const std::array<std::pair<const char*, const char*>, 8> cpuid{{{"KVMKVMKVM", "kvm"},
                                                                          {"TCGTCGTCGTCG", "tcg"},
                                                                          {"VMwareVMware", "vmware"},
                                                                          {"Microsoft Hv", "microsoft"},
                                                                          {"XenVMMXenVMM", "xen"},
                                                                          {"bhyve bhyve ", "bhyve"},
                                                                          {"ACRNACRNACRN", "acrn"},
                                                                          {"QNXQVMBSQG", "qnx"}}};
  for (const auto& [sig, name] : cpuid)
    if (e.cpuid_vendor == sig) return name;
  // 2. DMI vendor strings (systemd's dmi_vendor_table, by prefix).
  static const std::array<std::pair<const char*, const char*>, 17> dmi{{{"KVM", "kvm"},
                                                                         {"OpenStack", "kvm"},
                                                                         {"KubeVirt", "kvm"},
                                                                         {"Amazon EC2", "amazon"},
                                                                         {"QEMU", "qemu"},
                                                                         {"VMware", "vmware"},
                                                                         {"VMW", "vmware"},
                                                                         {"innotek GmbH", "oracle"},
                                                                         {"VirtualBox", "oracle"},
                                                                         {"Xen", "xen"},
                                                                         {"Bochs", "bochs"},
                                                                         {"Parallels", "parallels"},
                                                                         {"BHYVE", "bhyve"},
                                                                         {"Hyper-V", "microsoft"},
                                                                         {"Apple Virtualization", "apple"},
                                                                         {"Google Compute Engine", "google"},
                                                                         {"Google", "google"}}};
  std::string found;
  for (const std::string* s : {&e.sys_vendor, &e.product_name, &e.bios_vendor}) {
    for (const auto& [prefix, name] : dmi)
      if (starts_with(*s, prefix)) {
        found = name;
        break;
      }
    if (!found.empty()) break;
  }
  if (found.empty() && e.sys_vendor == "Microsoft Corporation" && e.product_name == "Virtual Machine")
    found = "microsoft";
  // SeaBIOS/OVMF under QEMU name no vendor of their own: QEMU machine types.
  if (found.empty() && e.hypervisor_flag && (e.bios_vendor == "SeaBIOS" || starts_with(e.bios_vendor, "EDK II")))
    found = "qemu";
  if (found == "qemu") return e.kvm_clock ? "kvm" : "tcg";  // kvm-clock exists only with KVM
  if (!found.empty()) return found;
  if (e.kvm_clock) return "kvm";
  return e.hypervisor_flag ? "vm-other" : "real";
}

std::string detect_accelerator(const harness::kernel::Fs& fs) { return classify_accelerator(read_virt_evidence(fs)); }

}  // namespace harness::case_
