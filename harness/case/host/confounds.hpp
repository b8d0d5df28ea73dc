#pragma once
// Confounds recorded with every case (SPEC.md "Version 2 additions"): CPU steal time of
// the guest, and the harness's own CPU time and peak RSS. Parsers are pure (text in,
// numbers out) and unit-tested; the readers go through harness::kernel::Fs.
//
//   steal:  /proc/stat first line "cpu user nice system idle iowait irq softirq steal ...",
//           8th value, in USER_HZ ticks (sysconf(_SC_CLK_TCK), 100 on Linux) -> us.
//   cpu:    /proc/<pid>/stat fields 14 utime and 15 stime (1-based, after the "(comm)"
//           which may hold spaces), USER_HZ ticks -> ns. Includes every thread of the
//           process (the reclaim thread too); reaped children are not included.
//   RSS:    /proc/<pid>/status VmHWM (peak resident set, kB = KiB).
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/case/run/telemetry_sample.hpp"
#include "harness/kernel/fs.hpp"

namespace harness::case_ {

/// Cumulative steal of the aggregate "cpu" line of /proc/stat, us; nullopt when absent.
/// Only the first "cpu" line is looked at; allocates nothing (read every tick).
std::optional<std::int64_t> parse_steal_us(std::string_view proc_stat, long user_hz);
/// utime + stime of a /proc/<pid>/stat line, ns (telemetry_cpu.hpp parse_pid_cpu_ticks x 1e9 /
/// user_hz); nullopt when malformed.
std::optional<std::int64_t> parse_cpu_ns(std::string_view pid_stat, long user_hz);
/// VmHWM of a /proc/<pid>/status text, KiB; nullopt when absent.
std::optional<std::int64_t> parse_peak_rss_kib(const std::string& pid_status);

/// CPU time and peak RSS of one process at one moment.
struct SelfUsage {
  std::optional<std::int64_t> cpu_ns;        ///< utime + stime, ns
  std::optional<std::int64_t> peak_rss_kib;  ///< VmHWM, KiB
};

/// Reads /proc/<pid>/{stat,status} (pid 0 = self). Unreadable files leave nullopt.
SelfUsage read_usage(const harness::kernel::Fs& fs, pid_t pid);
/// Reads the steal of /proc/stat, us (nullopt when unreadable).
std::optional<std::int64_t> read_steal_us(const harness::kernel::Fs& fs);
/// USER_HZ (sysconf(_SC_CLK_TCK)).
long user_hz();
/// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), ns.
std::int64_t thread_cpu_ns();
/// The current clocksource (/sys/devices/system/clocksource/clocksource0/
/// current_clocksource), nullopt when unreadable.
std::optional<std::string> read_clocksource_or_none(const harness::kernel::Fs& fs);

/// outcome_json.steal over the samples (warmup..recovery).
struct StealSummary {
  std::optional<std::int64_t> total_us;  ///< last - first steal_us; null with fewer than 2 samples
  /// Largest growth between consecutive samples scaled to 1 s by their t_ns distance, us;
  /// null with fewer than 2 samples.
  std::optional<double> max_per_s_us;
  int samples = 0;  ///< samples that carry steal_us
  /// {total_us, max_per_s_us, samples}.
  nlohmann::json to_json() const;
};
StealSummary steal_summary(const std::vector<TelemetrySample>& samples);

}  // namespace harness::case_
