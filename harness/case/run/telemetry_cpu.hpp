#pragma once
// The CPU time reclaim takes, where the kernel accounts it (docs/DESIGN.md "Telemetry at 1 Hz";
// results/schema.sql version 8), sampled with the 1 Hz telemetry:
//   - kswapd: utime + stime of the kswapd kernel threads (/proc/<pid>/stat fields 14 and 15,
//     USER_HZ ticks; one thread per NUMA node, `kswapd<N>`: the study's 1-vCPU VM has kswapd0).
//     Background reclaim and the compression into zram it causes run there.
//   - bg and fg cpu.stat usage_usec and system_usec (us): system time of a cgroup's tasks, which
//     holds their direct reclaim (and the compression into zram in it) and their page faults.
// A memory.reclaim write runs in the writer's context: its CPU is the writing thread's
// (reclaim_actions.write_cpu_us, CLOCK_THREAD_CPUTIME_ID around write(2); reclaim_writer.hpp).
// Parsers are pure (text in, numbers out) and allocate nothing (read every tick).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/kernel/fs.hpp"

namespace harness::case_ {

/// utime + stime of one /proc/<pid>/stat text, USER_HZ ticks: fields 14 and 15 (1-based),
/// counted after the last ')' that closes the comm (which may hold spaces and parentheses).
/// nullopt when the text is malformed (no ')', too few fields, a field not a number).
std::optional<std::int64_t> parse_pid_cpu_ticks(std::string_view pid_stat);

/// The pids of the kswapd threads: every numeric entry of /proc under `fs` whose comm (first
/// line of /proc/<pid>/comm) is `kswapd<digits>`, in pid order. An entry that vanishes while it
/// is read is skipped. Empty when there is none (a tree without them). Throws IoError when /proc
/// cannot be listed.
std::vector<int> kswapd_pids(const harness::kernel::Fs& fs);

/// usage_usec and system_usec of one cgroup's cpu.stat text, us; a key the file lacks is
/// nullopt (never 0). Throws ParseError (harness/kernel/keyed.hpp pick_keyed) on a malformed line.
struct CpuStatUsage {
  std::optional<std::int64_t> usage_us, system_us;
};
CpuStatUsage parse_cpu_stat_usage(std::string_view cpu_stat, const std::string& file);

}  // namespace harness::case_
