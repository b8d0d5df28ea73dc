#pragma once
// Restoration verification (docs/DESIGN.md "Restoration"): after teardown the host must show
// no swap in use, the case's cgroups gone and no stray processes. Pure: it judges
// observations (read through hk_kernel by the executor, or from fixtures in tests).
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/kernel/swap.hpp"

namespace harness::case_ {

/// What the executor saw after teardown.
struct RestorationObservation {
  std::vector<harness::kernel::SwapDevice> swaps;       ///< /proc/swaps after swapoff
  std::vector<std::string> case_swap_paths;    ///< devices the case enabled ("/dev/zram0", swapfile)
  std::vector<std::string> cgroups_present;    ///< case cgroup dirs that still exist
  std::vector<pid_t> stray_pids;               ///< case processes still alive (or still in cgroup.procs)
  std::optional<std::uint64_t> zram_disksize_bytes;  ///< after reset (0 expected); nullopt = device gone/not read
  /// The harness's own zram device ("/dev/zram1") when it still exists although it was
  /// created by hot_add and should have been removed; "" = removed (or a borrowed spare).
  std::string owned_zram_left;
  /// check_vm_baseline()'s problem when MemAvailable after the case fell below the VM's
  /// first-case baseline by more than the tolerance (vm_state.hpp); "" = within or unjudged.
  std::string vm_baseline_problem;
  /// VariantApplier::restore()'s problems: a sysctl or sysfs knob of the A/B variant not
  /// written back to its `before` value, or not reading back as it (variant.hpp).
  std::vector<std::string> variant_problems;
};

/// The verdict. clean iff problems is empty.
struct RestorationVerdict {
  bool clean = false;
  std::vector<std::string> problems;  ///< one sentence per finding
  nlohmann::json to_json() const;     ///< {"clean":..,"problems":[..]}
};

/// Rules: every /proc/swaps device with used_kib > 0 is a problem ("no swap in use");
/// any device of case_swap_paths still listed is a problem (it must be swapped off);
/// any cgroup still present; any stray pid; zram disksize != 0 (not reset); the harness's
/// hot-added zram device still present (not removed); MemAvailable below the VM's
/// baseline beyond tolerance; any variant knob not restored.
RestorationVerdict verify_restoration(const RestorationObservation& obs);

}  // namespace harness::case_
