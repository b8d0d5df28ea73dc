#pragma once
// Per-case summaries the analysis works from: pressure-phase latency quantiles per canary and
// the mechanism counters of the pressure phase. Definitions: docs/PROTOCOL.md ("Every case keeps
// its outcome"), results/schema.sql (units), study (wake delay, service time, deadline miss).
#include "analysis/data/case_outcome.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace analysis {

/// The two canaries (primary outcomes), in report order.
enum class Canary { Compute = 0, Sqlite = 1 };

/// "compute" | "sqlite".
const char* canary_name(Canary c);

/// One canary request as stored (CLOCK_MONOTONIC ns; wake/completion may be NULL).
struct RawRequest {
  std::int64_t seq = 0;
  std::int64_t scheduled_ns = 0;
  std::optional<std::int64_t> wake_ns;
  std::optional<std::int64_t> completion_ns;
};

/// Latency of one canary over the pressure phase of one case. All times in microseconds (us).
/// A request belongs to the pressure phase when its scheduled start is in [start_ns, end_ns).
/// Censoring (docs/PROTOCOL.md): a pressure-phase request without a completion time, and a
/// scheduled pressure-phase request missing from the trace (truncated trace: the schedule
/// origin + seq x period implies it, the trace lacks its seq), is CENSORED: its response enters
/// the quantiles as the lower bound (observation end - scheduled start), observation end = the
/// start of the restoration phase. Any censored request makes p50/p95/p99 lower bounds
/// (`censored > 0`). Censored requests count as deadline misses; their wake/service are unknown.
/// A `lost` case has no trace: its quantiles are imputed (`imputed`, see campaign_data.hpp).
struct LatencySummary {
  std::size_t requests = 0;         ///< requests scheduled in the pressure phase (recorded + missing)
  std::size_t incomplete = 0;       ///< recorded with completion NULL (never completed): censored
  std::size_t missing = 0;          ///< implied by the schedule but absent from the trace: censored
  std::size_t censored = 0;         ///< incomplete + missing
  bool truncated = false;           ///< missing > 0: fewer requests recorded than the schedule implies
  bool imputed = false;             ///< lost case: quantiles imputed (worst observed), no trace
  std::size_t deadline_misses = 0;  ///< completion > scheduled + period, plus censored ones
  std::size_t nonpositive = 0;      ///< response <= 0 (clock or recording error)
  std::int64_t first_nonpositive_seq = -1;  ///< seq of the first such request, -1 if none
  double p50_us = 0, p95_us = 0, p99_us = 0;          ///< response = completion - scheduled (censored: lower bound)
  double wake_p50_us = 0, wake_p99_us = 0;            ///< wake delay = wake - scheduled
  double service_p50_us = 0, service_p99_us = 0;      ///< service = completion - wake
  bool has_wake = false;                              ///< wake/service quantiles available
  /// True when p99_us is a lower bound or an imputed value (shown flagged in the report).
  bool p99_flagged() const { return censored > 0 || imputed; }
};

/// Where and how one canary's pressure phase is observed (CLOCK_MONOTONIC ns).
struct PhaseWindow {
  std::int64_t start_ns = 0, end_ns = 0;   ///< pressure phase [start_ns, end_ns)
  std::int64_t observation_end_ns = 0;     ///< restoration phase start (docs/PROTOCOL.md)
  std::int64_t period_ns = 100'000'000;    ///< canary period (spec canaries.period_ms; study: 100 ms)
  std::int64_t origin_ns = 0;              ///< schedule origin (seq 0) used when the trace is empty
};

/// Summarises the requests of one canary (ordered by seq) over the pressure phase, censoring as
/// documented at LatencySummary. The schedule origin is taken from the first recorded request
/// (scheduled_ns - seq x period), else w.origin_ns. Errors: std::invalid_argument when no request
/// is scheduled in the phase (neither recorded nor implied).
LatencySummary summarize_requests(std::span<const RawRequest> reqs, const PhaseWindow& w);

/// What bg held in one phase (the 1 Hz telemetry samples whose `phase` is that phase), MiB (2^20
/// bytes); each absent when no sample carries its column (arm_effects.hpp phase_memory).
struct PhaseMemory {
  std::optional<double> bg_current_avg_mib;    ///< time average of bg memory.current (trapezoids over t_ns)
  std::optional<double> bg_current_min_mib;    ///< minimum of bg memory.current
  std::optional<double> zram_pool_avg_mib;     ///< time average of zram mm_stat mem_used_total (the pool's DRAM)
  /// Net DRAM freed over the phase: the fall of bg memory.current (first sample - last) less the
  /// growth of the zram pool (mem_used_total last - first). Negative: bg ended holding more.
  std::optional<double> net_freed_mib;
  std::optional<double> swapfile_used_max_mib;  ///< the swapfile's /proc/swaps Used, maximum (not DRAM)
};

/// Mechanism counters over the pressure phase (differences of cumulative counters between the
/// first and last 1 Hz telemetry sample whose t_ns is in [start_ns, end_ns]); absent when fewer
/// than two samples carry the column.
struct Mechanism {
  std::optional<double> bg_some_stall_s, bg_full_stall_s;  ///< bg memory.pressure totals, s
  std::optional<double> fg_some_stall_s, fg_full_stall_s;  ///< fg memory.pressure totals, s
  std::optional<double> sys_some_stall_s, sys_full_stall_s;  ///< /proc/pressure/memory totals, s
  /// cpu.pressure / io.pressure some totals of bg, fg and the system (/proc/pressure), and the
  /// system io full total, s (telemetry schema version 4; absent in older DBs).
  std::optional<double> bg_cpu_some_s, fg_cpu_some_s, sys_cpu_some_s;
  std::optional<double> bg_io_some_s, fg_io_some_s, sys_io_some_s, sys_io_full_s;
  /// Where pressure went: /proc/swaps `Used` of the swapfile and of the zram device (telemetry
  /// swapfile_used_kib, zram_swap_used_kib), maximum over the pressure phase, MiB; and the
  /// swapfile's maximum before the trigger (samples before the trigger time), MiB. A device
  /// not swapped on has no row (NULL): absent = never active in the phase.
  std::optional<double> swapfile_used_peak_mib, zram_swap_used_peak_mib, swapfile_before_trigger_peak_mib;
  std::optional<double> refaults;         ///< bg+fg workingset_refault_anon+file, count
  std::optional<double> swapout_kib;      ///< pswpout delta x page size, KiB
  std::optional<double> zram_orig_peak_mib, zram_compr_peak_mib, zram_mem_used_peak_mib;  ///< MiB, max in phase
  std::optional<double> oom_kills;        ///< bg+fg memory.events oom_kill delta
  /// What the arm bought (arm_effects.hpp): bg memory per phase, warmup / pressure / recovery
  /// (PhaseMemory), and over the pressure phase the time average of bg memory.current + the zram
  /// pool (mem_used_total): the DRAM that bg's pages held, resident or compressed, MiB.
  std::array<PhaseMemory, 3> phase_memory;
  std::optional<double> dram_held_avg_mib;
  /// Reclaim work and the CPU time it took over the pressure phase (deltas as above): bg pgsteal x
  /// page size, MiB; kswapd threads' utime + stime, bg and fg cpu.stat usage and system time, ms
  /// (telemetry schema version 8; absent in older DBs).
  std::optional<double> bg_pgsteal_mib;
  std::optional<double> kswapd_cpu_ms, bg_cpu_usage_ms, bg_cpu_system_ms, fg_cpu_usage_ms, fg_cpu_system_ms;
};

/// Sums of the canary's per-request getrusage(RUSAGE_THREAD) deltas (canary_requests minflt,
/// majflt, nvcsw, nivcsw; canaries/trace_record.hpp) over the requests scheduled in the pressure
/// phase. Counts.
struct RequestUsage {
  std::int64_t requests = 0;          ///< pressure-phase requests that carry the columns
  std::int64_t minflt = 0, majflt = 0;  ///< minor / major page faults
  std::int64_t nvcsw = 0, nivcsw = 0;   ///< voluntary / involuntary context switches
};

/// Everything the reports need about one case (latest attempt): a `completed` case, or a `lost`
/// case (status "lost": no trace, latency imputed, see campaign_data.hpp).
struct CaseSummary {
  std::string case_id, campaign, vm, regime, triplet_id, status, accelerator, kernel_release;
  std::int64_t repeat = 0;
  std::string configuration;             ///< the arm name (cases.configuration; analysis/data/arms.hpp)
  std::optional<std::int64_t> dose_bytes;
  std::int64_t page_size_bytes = 4096;
  nlohmann::json spec;                   ///< spec_json (harness/case/SPEC.md)
  std::int64_t pressure_start_ns = 0, pressure_end_ns = 0;
  std::array<std::optional<LatencySummary>, 2> latency;  ///< per Canary; empty = no requests
  std::array<std::optional<RequestUsage>, 2> usage;      ///< per Canary; empty = no trace (lost) or not recorded
  Mechanism mech;
  nlohmann::json outcome_json;           ///< cases.outcome_json (null when absent or invalid)
  CaseOutcome outcome;                   ///< outcome counts and secondary measurements
  bool lost() const { return status == "lost"; }
  bool usable = true;                    ///< false: excluded (reason in `excluded_because`)
  std::string excluded_because;
};

}  // namespace analysis
