#pragma once
// The 1 Hz telemetry sampler (docs/DESIGN.md "Telemetry at 1 Hz"): PSI some/full totals of bg,
// fg and the system for memory, cpu and io (us); bg/fg memory.current, memory.swap.current, memory.stat (pgsteal,
// pgscan, workingset_refault_*, pgmajfault), memory.events (oom, oom_kill); /proc/vmstat
// pswpin/pswpout; /proc/swaps rows of zram and the swapfile; zram mm_stat; /proc/stat
// cpu steal (steal_us); the CPU time reclaim takes (telemetry_cpu.hpp: the kswapd threads'
// utime + stime, bg and fg cpu.stat usage and system time). read_ns = CLOCK_MONOTONIC right
// after bg memory.pressure. Every read
// goes through hk_kernel. A failed read leaves its fields empty (NULL) and is named in
// extra.errors; it never stops the case.
//
// Cost (docs/DESIGN.md "Harness footprint in the guest"): the files are opened once, when the
// sampler is made, and each is read with one pread(2) per sample into one reused buffer
// (harness/kernel/open_file.hpp); the parsers pick out the fields recorded without building
// maps or strings. A clean sample allocates only what it stores (its extra JSON).
#include <string>
#include <vector>

#include "harness/case/run/telemetry_sample.hpp"
#include "harness/kernel/cgroup.hpp"
#include "harness/kernel/open_file.hpp"
#include "harness/kernel/zram.hpp"

namespace harness::case_ {

class TelemetrySampler {
 public:
  /// Opens the files of `bg`, `fg`, /proc and `zram` (may be null: no zram device);
  /// `zram_path`/`swapfile_path` are /proc/swaps names. A file that cannot be opened now is
  /// tried again at every sample (and named in extra.errors while it fails).
  TelemetrySampler(harness::kernel::Fs fs, harness::kernel::Cgroup bg, harness::kernel::Cgroup fg, const harness::kernel::Zram* zram,
                   std::string zram_path, std::string swapfile_path);

  /// Reads everything once. `t_ns` is the tick time to record (CLOCK_MONOTONIC ns);
  /// extra.read_duration_ns says how long all the reads took (ns).
  TelemetrySample sample(std::int64_t t_ns, const std::string& phase);

 private:
  using Opt = TelemetrySample::Opt;
  // sample()'s steps, in the order it reads the files; a failed read leaves its fields empty
  // and is named in `errors` (null until one fails).
  /// The PSI files: bg memory first (read_ns right after it), then fg and the system; cpu and io.
  void read_pressure(TelemetrySample& s, nlohmann::json& errors);
  /// bg and fg memory.current, memory.swap.current, memory.stat and memory.events.
  void read_memory(TelemetrySample& s, nlohmann::json& errors);
  /// /proc/vmstat pswpin/pswpout, the /proc/swaps rows of zram and the swapfile, zram mm_stat.
  void read_swap(TelemetrySample& s, nlohmann::json& errors);
  /// /proc/stat cpu steal; named in `errors` whenever it stays empty.
  void read_steal(TelemetrySample& s, nlohmann::json& errors);
  /// The kswapd threads' /proc/<pid>/stat (their sum; "proc.kswapd" in `errors` when none was
  /// found or one is unreadable) and bg and fg cpu.stat.
  void read_cpu(TelemetrySample& s, nlohmann::json& errors);
  /// One PSI file's some and full totals (us), named `what` in `errors`.
  void read_psi(const char* what, harness::kernel::OpenFile& f, Opt& some, Opt& full, nlohmann::json& errors);
  /// One file holding one number; `what` is "<bg|fg>.<file name>".
  void read_u64(const char* what, harness::kernel::OpenFile& f, Opt& out, nlohmann::json& errors);

  /// The files of one cgroup that every sample reads.
  struct CgroupFiles {
    explicit CgroupFiles(const harness::kernel::Cgroup& cg);
    harness::kernel::OpenFile memory_pressure, cpu_pressure, io_pressure, memory_current, memory_swap_current,
        memory_stat, memory_events, cpu_stat;
  };
  struct ZramFiles {
    explicit ZramFiles(const harness::kernel::Fs& fs, const harness::kernel::Zram& z);
    harness::kernel::OpenFile initstate, mm_stat;
  };
  harness::kernel::Fs fs_;
  std::string zram_path_, swapfile_path_;
  CgroupFiles bg_, fg_;
  harness::kernel::OpenFile sys_memory_, sys_cpu_, sys_io_, vmstat_, swaps_, stat_;
  std::optional<ZramFiles> zram_;
  std::vector<harness::kernel::OpenFile> kswapd_;  ///< /proc/<pid>/stat of each kswapd thread, found once
  long user_hz_ = 100;                              ///< USER_HZ, the unit of /proc/<pid>/stat times
  std::string buf_;  ///< every read lands here; grows to the largest file once
};

}  // namespace harness::case_
