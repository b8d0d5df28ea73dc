#pragma once
// Host qualification (study: "qualification checked root access, the kernel and
// experiment configuration, a writable memory.reclaim interface, zram, a swapfile,
// available disk space, clean starting swap, and the source commit used for the
// campaign"; ours: the VM shape of the study's VMs is checked too, 1 vCPU and ~1 GiB).
//
// qualify::run(Options) -> Report. Every check has a name, whether it is required, what
// was found, and (when failing) how to fix it. Report::passed is true iff every required
// check passed. Recorded items (cmdline, THP, swappiness, clocksource, zram algorithms,
// compressors, MGLRU, kernel config, zswap state) are not judged here; the fleet preflight
// (harness/campaign/runner/preflight.hpp) compares the ones that must be equal across VMs. A feature
// the experiment needs that is compiled out is told from one switched off at boot by the
// kernel config and /proc/cmdline: the fix names the boot parameter (psi=1,
// cgroup_disable=memory removed, zswap.enabled=0) when the kernel has the feature. zswap
// enabled fails qualification (check `zswap`: it would intercept the pages zram should get).
#include "qualify/thresholds.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace qualify {

/// Inputs of a qualification run.
struct Options {
  /// Fs root of the host (tests point it at a copy of a fixture tree).
  std::string root = "/";
  /// Swapfile the campaign uses (absolute path on the host, joined under root).
  /// Empty = the campaign has no swapfile: the check is skipped (recorded as not required).
  std::string swapfile_path;
  /// Campaign VM shape (study: 1 vCPU, 1 GiB).
  unsigned vcpus = 1;
  std::uint64_t memory_mib = 1024;
  /// MemTotal must lie within this fraction below/above memory_mib: the guest kernel
  /// reserves memory (6.1 cloud kernel, -m 1024: MemTotal ~ 0.95-0.97 GiB), so 15%.
  double memory_tolerance = 0.15;
  /// "any" or the 40-hex commit the campaign is pinned to.
  std::string pinned_commit = "any";
  /// Commit of this build (default harness::build::kSourceCommit; injectable for tests).
  std::optional<std::string> source_commit;
  /// Whether this build had uncommitted changes (default harness::build::kSourceDirty).
  std::optional<bool> source_dirty;
  /// Directory whose filesystem must have min_free_disk_bytes free (DB, traces, swapfile);
  /// when it does not exist yet, its nearest existing ancestor is judged.
  std::string disk_path = "/";
  /// Default kMinFreeDiskMiB (thresholds.hpp), the same number a case demands.
  std::uint64_t min_free_disk_bytes = kMinFreeDiskMiB << 20;
  /// Probe memory.reclaim on a scratch cgroup (mkdir, write "1M", rmdir). Tests on
  /// read-only fixture trees may turn it off (then the check fails: "not probed").
  bool probe_reclaim = true;
  /// Name of the scratch cgroup created under the cgroup2 root for the probe.
  std::string probe_cgroup = "harness-qualify-probe";
  /// Prove the swapfile works: swapon(2) then swapoff(2) when no swap is active (a file on
  /// tmpfs or copy-on-write btrfs passes every static check and fails here, EINVAL).
  /// Only on the live system (root "/"): on a fixture tree the host kernel is not the
  /// fixture's, so the trial is skipped unless `trial_swapon_under_root` is set, which tests
  /// do together with harness::kernel::Fs::inject_fault (never reaching the real syscall).
  bool trial_swapon = true;
  bool trial_swapon_under_root = false;
  /// The campaign's zram compressor (e.g. lzo-rle); "" = not checked. Available when a zram
  /// device lists it, /proc/crypto has it, or the kernel has its module.
  std::string zram_algorithm;
  /// The lowest swap priority the case uses (its swapfile's, backend.swapfile_priority).
  /// An active swap device the harness does not own (zram-tools' zram0, a distro swap
  /// partition) must sit below it, or the kernel would swap the case's pages to it
  /// (clean_swap). nullopt = not judged (plain `harness qualify`): reported only.
  std::optional<int> case_min_swap_priority;
  /// Effective uid to judge (default geteuid(); injectable for tests).
  std::optional<unsigned> euid;
};

/// One check.
struct Check {
  std::string name;      ///< stable id, e.g. "cgroup2_memory"
  bool required = true;  ///< false: informational, does not affect Report::passed
  bool passed = false;
  std::string found;  ///< what was observed (always filled)
  std::string fix;    ///< how to fix it (filled when !passed)
};

/// The whole report. `recorded` holds the unjudged facts (kernel_release,
/// kernel_cmdline, thp_enabled, swappiness, clocksource, zram_algorithms, mglru,
/// kernel_config{CONFIG_PSI,...}, source_commit, ...).
struct Report {
  bool passed = false;
  std::vector<Check> checks;
  nlohmann::json recorded = nlohmann::json::object();
  /// Messages "<name>: <found> -> fix: <fix>" of failing required checks.
  std::vector<std::string> reasons() const;
  /// {"passed":..,"checks":[{name,required,passed,found,fix}],"recorded":{..},"reasons":[..]}
  nlohmann::json to_json() const;
  /// Readable table: one row per `Check` (PASS/FAIL/info, name, found), fixes below
  /// failing rows, then the recorded items.
  std::string to_table() const;
};

/// Runs every check. Never throws for host problems (they become failing checks);
/// only std::bad_alloc-like failures propagate.
Report run(const Options& opt);

/// The compressors zram can use (6.1: crypto API names), in the order recorded in
/// `recorded.compressors` (name -> where available, null = nowhere).
const std::vector<std::string>& known_compressors();

/// The kernel config item that builds compressor `alg` ("lzo-rle" -> "CONFIG_CRYPTO_LZO");
/// "" for a name not in known_compressors(). Recorded in `recorded.kernel_config`.
std::string compressor_config_item(const std::string& alg);

/// True for "any" or exactly 40 lowercase/uppercase hex digits.
bool valid_pinned_commit(const std::string& s);

}  // namespace qualify
