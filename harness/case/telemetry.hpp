#pragma once
// The 1 Hz telemetry sampler (docs/DESIGN.md "Telemetry at 1 Hz"): PSI some/full totals of bg,
// fg and the system for memory, cpu and io (us); bg/fg memory.current, memory.swap.current, memory.stat (pgsteal,
// pgscan, workingset_refault_*, pgmajfault), memory.events (oom, oom_kill); /proc/vmstat
// pswpin/pswpout; /proc/swaps rows of zram and the swapfile; zram mm_stat; /proc/stat
// cpu steal (steal_us). read_ns = CLOCK_MONOTONIC right after bg memory.pressure. Every read
// goes through hk_kernel. A failed read leaves its fields empty (NULL) and is named in
// extra.errors; it never stops the case.
#include <string>

#include "harness/case/telemetry_sample.hpp"
#include "harness/kernel/cgroup.hpp"
#include "harness/kernel/zram.hpp"

namespace harness::case_ {

class TelemetrySampler {
 public:
  /// `zram` may be null (no zram device); `zram_path`/`swapfile_path` are /proc/swaps names.
  TelemetrySampler(harness::kernel::Fs fs, harness::kernel::Cgroup bg, harness::kernel::Cgroup fg, const harness::kernel::Zram* zram,
                   std::string zram_path, std::string swapfile_path);

  /// Reads everything once. `t_ns` is the tick time to record (CLOCK_MONOTONIC ns);
  /// extra.read_duration_ns says how long all the reads took.
  TelemetrySample sample(std::int64_t t_ns, const std::string& phase) const;

 private:
  harness::kernel::Fs fs_;
  harness::kernel::Cgroup bg_, fg_;
  const harness::kernel::Zram* zram_;
  std::string zram_path_, swapfile_path_;
};

}  // namespace harness::case_
