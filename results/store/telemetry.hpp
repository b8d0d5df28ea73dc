#pragma once
// telemetry (results/schema.sql; stored under the case's key in telemetry_rows, version 5): the
// 1 Hz samples of a case. One member of TelemetryRow per column, named as the column; units as
// the name says (_us microseconds, _bytes bytes, _kib KiB, counters from memory.stat and
// /proc/vmstat in pages or events). nullopt = NULL: not measured or absent in that kernel, never 0.
//
// Adding a column: schema.sql (and its version step in results/db.cpp), a member here, and one
// line of telemetry.cpp's column list; every reader and the writer take it from there.
//
// Errors: DbError on any SQLite failure.
#include "results/db.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace results {

/// One telemetry sample.
struct TelemetryRow {
  using Opt = std::optional<std::int64_t>;
  std::int64_t t_ns = 0;  ///< CLOCK_MONOTONIC ns of the tick
  std::optional<std::string> phase;  ///< warmup | pressure | recovery
  Opt bg_some_us, bg_full_us, fg_some_us, fg_full_us, sys_some_us, sys_full_us;  ///< memory PSI totals
  Opt bg_current_bytes, fg_current_bytes, bg_swap_current_bytes, fg_swap_current_bytes;
  Opt bg_pgsteal, bg_pgscan, bg_workingset_refault_anon, bg_workingset_refault_file, bg_pgmajfault;
  Opt fg_pgsteal, fg_pgscan, fg_workingset_refault_anon, fg_workingset_refault_file, fg_pgmajfault;
  Opt bg_oom, bg_oom_kill, fg_oom, fg_oom_kill;  ///< memory.events
  Opt pswpin, pswpout;                           ///< /proc/vmstat, pages
  Opt zram_orig_data_bytes, zram_compr_data_bytes, zram_mem_used_bytes;
  Opt zram_swap_used_kib, swapfile_used_kib;  ///< /proc/swaps used, KiB
  std::optional<std::string> extra_json;      ///< anything else sampled
  Opt read_ns;   ///< CLOCK_MONOTONIC ns when bg memory.pressure was read
  Opt steal_us;  ///< /proc/stat cpu steal, cumulative
  /// Version 4: cpu.pressure and io.pressure totals of bg, fg and the system.
  Opt bg_cpu_some_us, bg_cpu_full_us, bg_io_some_us, bg_io_full_us;
  Opt fg_cpu_some_us, fg_cpu_full_us, fg_io_some_us, fg_io_full_us;
  Opt sys_cpu_some_us, sys_cpu_full_us, sys_io_some_us, sys_io_full_us;
  /// Version 8: the CPU time reclaim takes, cumulative us: kswapd threads' utime + stime, and
  /// cpu.stat usage_usec and system_usec of bg and fg.
  Opt kswapd_cpu_us, bg_cpu_usage_us, bg_cpu_system_us, fg_cpu_usage_us, fg_cpu_system_us;
};

/// Samples with t_ns in [from_ns, to_ns] (both included).
struct TimeWindow {
  std::int64_t from_ns = 0, to_ns = 0;
};

/// Calls `row` with each sample of `case_id` in t_ns order, those in `window` when given. A
/// column of a later schema version than the file's reads nullopt.
void for_each_telemetry(Db& db, const std::string& case_id, const std::optional<TimeWindow>& window,
                        const std::function<void(const TelemetryRow&)>& row);

/// The integer column named `column` of `row`; throws std::invalid_argument for a name that is
/// no integer column of telemetry.
TelemetryRow::Opt telemetry_value(const TelemetryRow& row, const std::string& column);

/// Cases with an OOM kill in any sample (bg_oom_kill + fg_oom_kill > 0).
std::int64_t cases_with_oom_kills(Db& db);

/// OOM kills of `case_id` over its samples: max - min of bg_oom_kill + fg_oom_kill (NULL as 0);
/// nullopt without samples.
struct OomKills {
  std::optional<std::int64_t> kills;
  std::int64_t samples = 0;
};
OomKills oom_kills(Db& db, const std::string& case_id);

/// fg oom_kill of `case_id`: samples that measured it, and its largest value (nullopt: none).
struct FgOomKills {
  std::int64_t measured = 0;
  std::optional<std::int64_t> max;
};
FgOomKills fg_oom_kills(Db& db, const std::string& case_id);

/// Inserts the samples of the case whose key is `case_key`, one statement prepared for all.
class TelemetryWriter {
 public:
  TelemetryWriter(Db& db, std::int64_t case_key);
  void write(const TelemetryRow& r);

 private:
  Stmt insert_;
  std::int64_t key_;
};

}  // namespace results
