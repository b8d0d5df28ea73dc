#pragma once
// The libvirt domain XML of one harness guest and the owner record kept in its
// <metadata> (ours; docs in README.md of this folder).
//
// Shape (the study's VM: 1 vCPU, 1 GiB, from the campaign's vm: block): q35, direct kernel
// boot of the harness image (kernel, initramfs, raw data disk as virtio with cache='none'
// as local guests), <memballoon model='none'/> (a balloon would change the memory the
// experiment controls), <panic model='isa'/>, on_crash / on_reboot / on_poweroff destroy
// (a guest that crashes or whose agent exits is gone, never restarted behind the runner's
// back), a serial console to a file, no USB, no graphics. The agent's port reaches the
// hypervisor through qemu user-mode networking with a host forward on the hypervisor's
// loopback address (libvirt 9.0 has no passt backend): a <qemu:commandline> netdev and a
// virtio-net NIC at an explicit PCI address (without one qemu puts it in slot 1, which
// libvirt's pcie-root-ports hold, and the domain fails to start).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace harness::pool::libvirt {

/// XML namespace of the owner record (virDomainGetMetadata key).
inline constexpr const char* kOwnerNamespace = "http://reclaim-harness/schemas/libvirt-owner/1";
/// Its prefix in the domain XML.
inline constexpr const char* kOwnerPrefix = "rh";
/// PCI slot of the agent's NIC on pcie.0 (free on libvirt's q35 layout).
inline constexpr const char* kNicPciAddr = "0x9";

/// Who a domain belongs to, and what the runner needs to adopt it after a kill -9.
struct OwnerRecord {
  std::string campaign;        ///< campaign name
  std::string db;              ///< absolute, normal path of the campaign DB
  std::string runner_host;     ///< gethostname() of the runner that booted it
  int runner_pid = -1;
  std::string guest;           ///< campaign VM name (vm0..vmN)
  int forward_port = 0;        ///< hypervisor loopback port forwarded to the agent's 8080
  std::string token_sha256;    ///< SHA-256 (hex) of the agent token put on its data disk
  std::string image_sha256;    ///< image manifest hash booted
  std::string accelerator;     ///< kvm | tcg
  std::string accelerator_reason;
  std::int64_t since_unix_ns = 0;
};

/// Everything one domain definition needs. Paths are paths on the hypervisor.
struct DomainSpec {
  std::string name;              ///< libvirt domain name
  std::string type = "qemu";     ///< "qemu" (TCG) or "kvm"
  int vcpus = 1;
  int memory_mib = 1024;
  std::string kernel;            ///< required
  std::string initrd;            ///< "" = none (the KVM trial boot)
  std::string cmdline;           ///< the whole kernel command line
  std::string disk;              ///< raw data disk; "" = none
  std::string console_log;       ///< serial console file (truncated at start); required
  int forward_port = 0;          ///< > 0: user-mode NIC, hostfwd 127.0.0.1:port -> guest 8080
  std::optional<OwnerRecord> owner;  ///< written into <metadata>
};

/// The domain XML. Throws std::invalid_argument naming the field when type is not qemu|kvm,
/// vcpus < 1, memory_mib < 256, kernel or console_log is empty, or forward_port > 65535.
std::string domain_xml(const DomainSpec& s);

/// The <rh:owner> element (with its namespace declaration) as virDomainSetMetadata takes it.
std::string owner_xml(const OwnerRecord& o);

/// Reads an owner element as virDomainGetMetadata returns it ("<owner>...</owner>").
/// nullopt when it is not one (no <campaign>).
std::optional<OwnerRecord> parse_owner_xml(const std::string& xml);

}  // namespace harness::pool::libvirt
