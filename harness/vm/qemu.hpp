#pragma once
// qemu-system-x86_64 command lines for local guests (docs/DESIGN.md "Facts measured"):
// q35, 1 vCPU / 1 GiB by default, direct kernel boot with the harness initramfs,
// the data disk as virtio-blk, user-mode networking with the agent port forwarded
// from 127.0.0.1:<host port> to the guest's 8080, serial console to a log file.
#include <string>
#include <vector>

namespace harness::vm {

/// One guest boot.
struct QemuConfig {
  std::string name = "vm0";       ///< guest hostname (kernel cmdline harness.name)
  std::string vmlinuz;
  std::string initramfs;
  std::string disk;               ///< raw ext4 data disk (per guest copy)
  std::string console_log;        ///< serial console output file
  std::string mode = "agent";     ///< agent | exec (kernel cmdline harness.mode)
  int vcpus = 1;
  int memory_mib = 1024;
  int swapfile_mib = 256;         ///< swapfile the guest creates if missing, MiB
  int host_port = 0;              ///< 127.0.0.1 port forwarded to guest 8080; 0 = none
  bool user_network = false;      ///< user-mode NIC even without a forwarded port
  std::string accelerator;        ///< kvm | tcg (required; harness/vm/accel.hpp decides)
  std::string pidfile;            ///< with daemonize: qemu writes its pid here
  bool daemonize = false;         ///< qemu -daemonize (vm up) vs. foreground (vm exec)
  /// A guest reboot restarts the guest (no -no-reboot) and its agent accepts POST
  /// /v1/reboot (kernel cmdline harness.allow_reboot=1): how real VMs that allow reboots
  /// behave (`harness vm up --allow-guest-reboot`; tests of reboot_between_cases).
  bool guest_reboot = false;
  /// Extra kernel parameters appended to -append (A/B variants, `vm reboot --cmdline`);
  /// each must match [A-Za-z0-9_.,=:+-]{1,256} (checked by qemu_argv).
  std::vector<std::string> extra_cmdline;
};

/// The warning printed when running under TCG (timings inflated; docs/DESIGN.md "Facts measured").
std::string tcg_warning();

/// The guest kernel command line of `c` (console, panic, harness.* parameters the guest's
/// /init reads, then extra_cmdline): what qemu_argv passes to -append and the libvirt engine
/// writes into <cmdline>. Throws std::invalid_argument when accelerator is not kvm|tcg or an
/// extra_cmdline parameter has characters outside [A-Za-z0-9_.,=:+-].
std::string guest_kernel_cmdline(const QemuConfig& c);

/// Full argv for qemu-system-x86_64. Throws std::invalid_argument naming the field when
/// vcpus < 1, memory_mib < 256, a path is empty, accelerator is not kvm|tcg, or an
/// extra_cmdline parameter has characters outside [A-Za-z0-9_.,=:+-].
std::vector<std::string> qemu_argv(const QemuConfig& c);

/// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0 and close).
/// Throws std::runtime_error when no socket can be bound.
int free_local_port();

}  // namespace harness::vm
