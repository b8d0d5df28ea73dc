#pragma once
// `harness vm exec`: one-shot guest. Boots a fresh guest (fresh copy of the base data
// disk), runs a script as root inside it with /out on the data disk, powers off, and
// copies /out and the console log back to the host.
#include <string>
#include <vector>

namespace harness::vm {

/// Inputs of a one-shot run.
struct ExecOptions {
  std::string cache_dir;     ///< cache root override
  std::string script;        ///< host path of the sh script to run in the guest
  std::string collect_dir;   ///< host dir receiving /out's contents and console.log
  int timeout_s = 600;       ///< whole boot+run+poweroff budget, seconds
  int vcpus = 1;
  int memory_mib = 1024;
  int swapfile_mib = 256;    ///< swapfile created in the guest, MiB
  bool network = false;      ///< attach user-mode networking (no port forward)
  std::string accelerator;   ///< auto | kvm | tcg; "" = $HARNESS_ACCEL, else auto (accel.hpp)
  /// Extra kernel parameters for this boot (`--cmdline`, e.g. psi=0), appended as
  /// QemuConfig::extra_cmdline (same character rule, checked there).
  std::vector<std::string> extra_cmdline;
};

/// What happened.
struct ExecResult {
  int script_status = -1;    ///< the script's exit code; 125 = guest found no script/disk;
                             ///< -1 = unknown (guest timed out or crashed)
  bool timed_out = false;
  std::string accelerator;   ///< kvm | tcg
  double seconds = 0;        ///< qemu start to qemu exit (or kill), wall seconds
  std::string console_log;   ///< collect_dir/console.log
};

/// Runs the script in a fresh guest. Throws std::runtime_error when the image is missing,
/// the script is unreadable or qemu cannot start; a script failure or a timeout is
/// reported in ExecResult (and whatever /out contains is still collected).
ExecResult exec_once(const ExecOptions& opts);

}  // namespace harness::vm
