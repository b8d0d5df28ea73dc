#pragma once
// The VM's state between cases (rules ours): on a reused VM
// (`fresh_guest_per_case: false`) page cache, dying cgroups and fragmentation would carry
// over from case to case. Around every case the executor
//   1. settles the VM: sync(2) (live root only), writes 3 to /proc/sys/vm/drop_caches and 1
//      to /proc/sys/vm/compact_memory (steps recorded with errno, never fatal);
//   2. reads MemAvailable, MemTotal (/proc/meminfo, KiB) and nr_descendants,
//      nr_dying_descendants (root cgroup.stat);
//   3. at the first case of a boot stores the reading as the VM's baseline in
//      /run/reclaim-harness/baseline ("mem_available_kib N", "case_id ID", "boot_id B"); a
//      baseline of another boot is replaced;
//   4. after restoration, judges MemAvailable against the baseline: more than
//      kBaselineToleranceFraction (10%) x MemTotal below it makes the restoration unclean (the
//      agent then refuses further cases until the VM is looked at).
// A fresh guest per case always has its first case, so the check is a no-op there.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case/host/case_cgroups.hpp"
#include "harness/kernel/fs.hpp"

namespace harness::case_ {

/// 10% of MemTotal (~97 MiB on the study's 1 GiB VMs). Measured in 6.1 TCG guests (3-case
/// runs): MemAvailable after sync, drop_caches and compaction moved by up to 50 MiB between
/// case ends and came back later (cause not identified), so 5% gave false unclean marks; a
/// leftover of a case (zram store, page cache or anon of dying memcgs) is hundreds of MiB.
inline constexpr double kBaselineToleranceFraction = 0.10;

/// One reading of the VM's memory state (after settle()).
struct VmState {
  std::optional<std::int64_t> mem_available_kib, mem_total_kib;
  std::optional<std::int64_t> nr_descendants, nr_dying_descendants;  ///< root cgroup.stat
  /// {"mem_available_kib","mem_total_kib","nr_descendants","nr_dying_descendants"} (null = unread).
  nlohmann::json to_json() const;
};

/// sync (only when the Fs root is "/"), drop_caches, compact_memory; appends the steps.
/// Never throws.
void settle_vm(const harness::kernel::Fs& fs, std::vector<StepRecord>& steps);
/// Reads the state. Never throws (unreadable values stay nullopt).
VmState read_vm_state(const harness::kernel::Fs& fs);

/// The VM's first-case baseline.
struct VmBaseline {
  std::int64_t mem_available_kib = 0;
  std::string case_id;  ///< the case that established it
  std::string boot_id;
};
inline constexpr const char* kVmBaselineFile = "run/reclaim-harness/baseline";
/// The baseline of this boot, or nullopt (none, other boot, unreadable).
std::optional<VmBaseline> read_vm_baseline(const harness::kernel::Fs& fs);
/// Stores `b` (creating run/reclaim-harness/). Throws harness::kernel::IoError.
void write_vm_baseline(const harness::kernel::Fs& fs, const VmBaseline& b);

/// The judgement of an after-case reading against the baseline.
struct BaselineCheck {
  bool judged = false;  ///< false when a value is missing (recorded, not judged)
  bool within = true;
  std::int64_t tolerance_kib = 0;
  std::int64_t shortfall_kib = 0;  ///< baseline - now (negative = more available than at baseline)
  /// The restoration problem when !within, e.g. "MemAvailable 612 MiB is 120 MiB below the
  /// VM's first-case baseline 732 MiB (case X; tolerance 48 MiB)".
  std::string problem;
  nlohmann::json to_json() const;
};
BaselineCheck check_vm_baseline(const VmState& now, const VmBaseline& baseline);

/// The VM at the start of a case (outcome_json.vm_state.start and .baseline).
struct VmStart {
  VmState state;
  std::vector<StepRecord> steps;      ///< settle_vm's steps, and a failed baseline write
  std::optional<VmBaseline> baseline;  ///< this boot's baseline (nullopt: none and none could be taken)
  bool established_baseline = false;  ///< this case stored it (the first case of the boot)
};
/// Settles and reads the VM, reads this boot's baseline, and, when there is none, stores
/// this reading as the baseline for case `case_id` (a failed write is a step with EIO).
/// Never throws.
VmStart record_vm_start(const harness::kernel::Fs& fs, const std::string& case_id);

}  // namespace harness::case_
