#pragma once
// Where the cgroup controllers live: cgroup2 mount points (/proc/self/mounts), v1
// hierarchy bindings (/proc/cgroups), this process's cgroups (/proc/self/cgroup).
// Used by qualification to name the real cause when cgroup v2 memory is unusable
// (e.g. "the memory controller is bound to cgroup v1").
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/kernel/fs.hpp"

namespace harness::kernel {

/// One line of /proc/self/mounts (octal escapes decoded).
struct Mount {
  std::string source, mountpoint, fstype;
  std::vector<std::string> options;  ///< comma-split
};
std::vector<Mount> parse_mounts(std::string_view text, const std::string& file);

/// One line of /proc/cgroups: "subsys_name hierarchy num_cgroups enabled".
/// hierarchy 0 = not bound to any v1 hierarchy (usable by cgroup2).
struct ControllerBinding {
  std::string name;
  int hierarchy = 0;
  unsigned num_cgroups = 0;
  bool enabled = false;
};
std::vector<ControllerBinding> parse_proc_cgroups(std::string_view text, const std::string& file);

/// The state of one controller (e.g. "memory") as qualification needs it.
struct ControllerPlacement {
  std::string name;
  bool compiled_in = false;                 ///< listed in /proc/cgroups
  bool enabled = false;                     ///< not disabled by cgroup_disable=
  int v1_hierarchy = 0;                     ///< > 0: bound to cgroup v1
  std::optional<std::string> v1_mountpoint;  ///< where that v1 hierarchy is mounted
  std::optional<std::string> cgroup2_mount;  ///< first cgroup2 mount point, absolute
  bool in_cgroup2_root = false;  ///< listed in <cgroup2>/cgroup.controllers
  bool enabled_for_children = false;  ///< listed in <cgroup2>/cgroup.subtree_control
};

/// Reads proc/self/mounts, proc/cgroups and the cgroup2 root files under `fs`
/// (cgroup2 mount point as find_cgroup2_mount).
/// Missing files leave the corresponding fields false/empty (never throws IoError);
/// malformed ones throw ParseError.
ControllerPlacement locate_controller(const Fs& fs, const std::string& name);

/// The first cgroup2 mount point (absolute, e.g. "/sys/fs/cgroup") from proc/self/mounts.
/// When proc/self/mounts is unreadable (e.g. a fixture tree without it) and
/// sys/fs/cgroup/cgroup.controllers exists, "/sys/fs/cgroup" is assumed. Else nullopt.
std::optional<std::string> find_cgroup2_mount(const Fs& fs);

}  // namespace harness::kernel
