#pragma once
// The guest's /init (a busybox sh script) carried in the initramfs.
#include <string>

namespace harness::vm {

/// Fixed guest layout shared by the init script, the data disk and the host side.
namespace guest {
inline constexpr const char* kBinDir = "/opt/harness/bin";       ///< harness binaries
inline constexpr const char* kDataMount = "/var/lib/harness";    ///< /dev/vda (ext4) mounted here
inline constexpr const char* kModulesList = "/etc/harness/modules.load";  ///< insmod order
inline constexpr const char* kTokenFile = "/var/lib/harness/token";        ///< agent token, 0600
inline constexpr const char* kAgentState = "/var/lib/harness/agent";       ///< agent state dir
inline constexpr const char* kSwapfile = "/var/lib/harness/swapfile";      ///< SPEC.md default
inline constexpr const char* kExecScript = "/var/lib/harness/exec/script.sh";  ///< vm exec
inline constexpr const char* kExecStatus = "/var/lib/harness/exec/status";     ///< its exit code
inline constexpr const char* kOutDir = "/var/lib/harness/out";  ///< /out in the guest
inline constexpr int kAgentPort = 8080;                          ///< guest port of the agent
}  // namespace guest

/// Path inside the data disk image of a guest path under guest::kDataMount
/// ("/var/lib/harness/out" -> "/out"). Throws std::invalid_argument for other paths.
std::string disk_path_of(const std::string& guest_path);

/// Text of /init. Behaviour, in order: mount proc, sysfs, devtmpfs, tmpfs /tmp and /run,
/// cgroup2 at /sys/fs/cgroup with "+memory +cpu +io" in the root's subtree_control;
/// insmod every module listed in kModulesList (dependency order, computed on the host);
/// bring lo and eth0 up as 10.0.2.15/24 via 10.0.2.2 (qemu user networking); mount
/// /dev/vda at kDataMount; create kSwapfile if missing (dd zeros + mkswap, size from the
/// kernel command line `harness.swapfile_mib=N`, default 256 MiB; not activated: the case
/// executor swapon()s it with its priority). Then by `harness.mode=`:
///  - `exec`: run kExecScript with /out -> kOutDir, store its exit code in kExecStatus,
///    print "HARNESS-EXEC-STATUS <code>" on the console, sync and power off.
///  - `agent` (default): oom_score_adj -1000, then `harness agent --bind 0.0.0.0 --port 8080
///    --token-file kTokenFile --state-dir kAgentState`; the guest powers off if it exits.
///    (0.0.0.0 inside the guest only: qemu forwards from 127.0.0.1 on the host.)
/// Every step prints "harness-init: ..." to the console; failures are printed, not fatal,
/// except a missing data disk in exec mode (status 125).
std::string init_script();

}  // namespace harness::vm
