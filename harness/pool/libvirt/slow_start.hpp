#pragma once
// Why a libvirt domain start can take most of a guest's boot-to-ready (ours; measured on
// libvirt 9.0, README.md in this folder "A slow domain start").
//
// Before it starts a domain, libvirt checks its cached qemu capabilities
// (virQEMUCapsIsValid). One of the checks asks whether the user qemu runs as
// (qemu.conf `user`, Debian: libvirt-qemu) may read and write /dev/kvm; when the cache
// was probed with KVM usable and that user cannot open /dev/kvm now, the cache is thrown
// away and qemu probed again ("KVM was enabled when probing '...', but it is not available
// now", at debug level), several times per start. A machine without udev leaves /dev/kvm
// root:root 0600, so this happens before every domain start: 58.6 s per start here against
// about 0.5 s once /dev/kvm is root:kvm 0660 (README.md "A slow domain start").
//
// The engine times each virDomainCreateXML; when it takes most of boot-to-ready it says
// so, with the causes it can see on a hypervisor that is this machine: /dev/kvm's owner
// and mode against the qemu user, and the probe lines of libvirtd's log when it has them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/error/expected.hpp"

namespace harness::pool::libvirt {

/// A start shorter than this is never reported, seconds (ours).
inline constexpr double kSlowStartFloorS = 5.0;

/// True when the domain start took at least half of boot-to-ready and at least
/// kSlowStartFloorS (both in seconds; boot-to-ready counts from before the start).
bool start_dominates(double start_s, double boot_to_ready_s);

/// /dev/kvm's owner, group and permission bits.
struct DeviceNode {
  unsigned uid = 0, gid = 0;
  unsigned mode = 0;  ///< permission bits (st_mode & 07777)
};

/// A user as the kernel checks it: uid and every group id (primary and supplementary).
struct RunAs {
  std::string name;
  unsigned uid = 0;
  std::vector<unsigned> gids;
};

/// True when `u` may open `node` for reading and writing: root always; else the owner bits
/// when u owns it, the group bits when one of u's groups is its group, the other bits
/// otherwise (the order the kernel checks them in).
bool may_read_write(const DeviceNode& node, const RunAs& u);

/// The user libvirt's qemu driver runs qemu as on the machine whose root is `host_root`:
/// `user =` / `group =` of <root>/etc/libvirt/qemu.conf, else Debian's libvirt-qemu (and its
/// primary group), with every group of <root>/etc/group that lists it. nullopt when that
/// user is not in <root>/etc/passwd.
std::optional<RunAs> qemu_run_user(const std::string& host_root);

/// Whether the qemu user may read and write <root>/dev/kvm: passed when it may, when there is
/// no /dev/kvm or when the user is unknown; else the Problem with the fix ("/dev/kvm is
/// root:root 0600: libvirt's qemu user libvirt-qemu (groups kvm, libvirt-qemu) cannot open
/// it; ... chgrp kvm /dev/kvm; chmod 0660 /dev/kvm").
Checked check_kvm_permission(const std::string& host_root);

/// What libvirtd log text (debug lines of qemu_capabilities; README.md says how to turn them
/// on) shows: the number of capability probes and the grounds libvirt gave for dropping its
/// cache, e.g. "libvirtd's log: 14 qemu capability probes; cache dropped because KVM was
/// enabled when probing but is not available now (x12), /dev/kvm changed (x1)". A value (a
/// finding read from a log for a slow start's note, never a failure); nullopt when the text
/// has no probe.
std::optional<std::string> probe_log_summary(const std::string& log_text);

/// Where libvirtd writes its log when it runs without systemd (Debian's default file output).
inline constexpr const char* kLibvirtdLog = "/var/log/libvirt/libvirtd.log";

/// The note for a slow start: "DOMAIN on URI: the domain start took S s of the B s
/// boot-to-ready; " then `findings` joined by "; ", or, when none is known, what to look at on
/// that host (its /dev/kvm for the qemu user, libvirtd's log).
std::string slow_start_note(const std::string& domain, const std::string& uri, double start_s,
                            double boot_to_ready_s, const std::vector<std::string>& findings);

/// Size of `log_file` in bytes (0 when it cannot be read): where a start's log lines begin.
std::uint64_t log_size(const std::string& log_file);

/// What this machine shows about a slow start on a hypervisor that is this machine with root
/// `host_root` (findings for slow_start_note): what `check_kvm_permission` finds, and
/// probe_log_summary of what `log_file` gained from byte `log_from` on (at most 1 MiB;
/// nothing when unreadable).
std::vector<std::string> local_slow_start_findings(const std::string& host_root, const std::string& log_file,
                                                   std::uint64_t log_from);

}  // namespace harness::pool::libvirt
