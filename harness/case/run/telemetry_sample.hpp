#pragma once
// One 1 Hz telemetry sample (docs/DESIGN.md "Telemetry at 1 Hz"); the controller reads the
// same sample. Fields map 1:1 to results/schema.sql `telemetry` columns.
// nullopt = not measured / absent in this kernel (stored as NULL, never as 0).
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace harness::case_ {

struct TelemetrySample {
  using Opt = std::optional<std::int64_t>;
  std::int64_t t_ns = 0;  ///< CLOCK_MONOTONIC ns of the tick (the scheduled absolute time)
  std::string phase;      ///< warmup | pressure | recovery
  Opt bg_some_us, bg_full_us, fg_some_us, fg_full_us, sys_some_us, sys_full_us;  ///< PSI totals, us
  Opt bg_current_bytes, fg_current_bytes, bg_swap_current_bytes, fg_swap_current_bytes;
  Opt bg_pgsteal, bg_pgscan, bg_workingset_refault_anon, bg_workingset_refault_file, bg_pgmajfault;  ///< pages/events
  Opt fg_pgsteal, fg_pgscan, fg_workingset_refault_anon, fg_workingset_refault_file, fg_pgmajfault;
  Opt bg_oom, bg_oom_kill, fg_oom, fg_oom_kill;  ///< memory.events counters
  Opt pswpin, pswpout;                           ///< /proc/vmstat, pages
  Opt zram_orig_data_bytes, zram_compr_data_bytes, zram_mem_used_bytes;  ///< zram mm_stat
  Opt zram_swap_used_kib, swapfile_used_kib;     ///< /proc/swaps used column, KiB
  Opt read_ns;   ///< CLOCK_MONOTONIC ns right after bg memory.pressure was read (SPEC.md v2)
  Opt steal_us;  ///< /proc/stat aggregate cpu steal, cumulative, us (USER_HZ ticks x 1e6 / USER_HZ)
  /// cpu.pressure and io.pressure totals of bg, fg (cgroup files) and the system
  /// (/proc/pressure/cpu, /proc/pressure/io), cumulative stall time, us. A full line the file
  /// lacks (/proc/pressure/cpu before 5.13) is NULL.
  Opt bg_cpu_some_us, bg_cpu_full_us, bg_io_some_us, bg_io_full_us;
  Opt fg_cpu_some_us, fg_cpu_full_us, fg_io_some_us, fg_io_full_us;
  Opt sys_cpu_some_us, sys_cpu_full_us, sys_io_some_us, sys_io_full_us;
  /// The CPU time reclaim takes, where the kernel accounts it (telemetry_cpu.hpp; schema
  /// version 8), cumulative, us: utime + stime of the kswapd threads (kswapd0 on the study's
  /// VM); bg and fg cpu.stat usage_usec and system_usec (direct reclaim is system time).
  Opt kswapd_cpu_us, bg_cpu_usage_us, bg_cpu_system_us, fg_cpu_usage_us, fg_cpu_system_us;
  /// Anything else sampled: read errors ("errors": {"bg.memory.pressure": "..."}),
  /// read_duration_ns (how long the sample took), missed ticks.
  nlohmann::json extra = nlohmann::json::object();
};

}  // namespace harness::case_
