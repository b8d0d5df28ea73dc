#pragma once
// What every qualification check shares (qualify/checks/*.cpp; the order they run in: run.cpp):
// the context a check reads and adds its Check to, the guard that turns a kernel read's
// exception into the check's `found`, and the small readings more than one check needs.
// Internal to qualify/: callers use qualify.hpp.
#include "harness/kernel/kernel.hpp"
#include "qualify/qualify.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace qualify::checks {

using harness::kernel::Fs;

/// The fix of every check that needs cgroup v2's memory controller where the host has none.
inline const char* const kUseGuest =
    "boot the host with systemd.unified_cgroup_hierarchy=1 (or cgroup_no_v1=memory) so cgroup2 gets the "
    "memory controller, or run in a guest (`harness vm up`)";

/// "12.3 MiB" for a byte count (one decimal).
std::string mib(std::uint64_t bytes);

/// One qualification run: its options, the host's files, the report the checks add to, and what
/// earlier checks found that later ones use.
struct Ctx {
  const Options& opt;
  Fs fs;
  Report& rep;
  std::optional<std::string> cg2;  // cgroup2 mount point, absolute
  bool root = false;
  std::optional<harness::kernel::KernelConfig> config;  // the running kernel's .config, when found

  /// Value of CONFIG_X in the kernel config ("y", "m", "n", ...); nullopt when no config was
  /// found or it does not mention the item.
  std::optional<std::string> cfg(const char* item) const { return config ? config->get(item) : std::nullopt; }

  Check& add(std::string name, bool required = true) {
    rep.checks.push_back(Check{std::move(name), required, false, "", ""});
    return rep.checks.back();
  }
};


/// Runs `body`; a harness::kernel::Error / std::exception thrown inside becomes found + fix.
void guarded(Check& c, const std::function<void()>& body, const std::string& fix_on_error);

/// The value of the last `name=` parameter on the kernel command line (the kernel honours the
/// last), nullopt when absent or /proc/cmdline is unreadable.
std::optional<std::string> cmdline_param(const Ctx& x, const std::string& name);

/// kstrtobool's false: 0, n, N, off (and "no", "false" as people write them).
bool is_false_word(const std::string& v);

/// The checks, one Check each (or two for cgroup2_memory), in the order run() calls them.
void check_root(Ctx& x);
void check_kernel(Ctx& x);
void check_psi(Ctx& x);
void check_cgroup2_memory(Ctx& x);
void check_memory_reclaim(Ctx& x, bool memory_ok);
void check_zram(Ctx& x);
void check_zram_algorithm(Ctx& x);
/// Records, per known compressor, where the running kernel has it (recorded.zram_algorithms).
void record_compressors(Ctx& x);
void check_zswap(Ctx& x);
void check_swapfile(Ctx& x);
void check_disk(Ctx& x);
void check_clean_swap(Ctx& x);
void check_commit(Ctx& x);
void check_vm_shape(Ctx& x);
/// Records what the report keeps beside the checks (recorded.*).
void record(Ctx& x);

}  // namespace qualify::checks
