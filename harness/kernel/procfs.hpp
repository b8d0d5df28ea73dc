#pragma once
// System-wide /proc and /sys values: vmstat, meminfo, oom_score_adj, kernel release,
// cmdline, and the small "record without judging" items of qualification (THP mode,
// swappiness, clocksource, MGLRU, online CPUs).
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/kernel/fs.hpp"
#include "harness/kernel/keyed.hpp"

namespace harness::kernel {

/// /proc/vmstat (counts; pswpin/pswpout in pages). Throws IoError/ParseError.
KeyedValues read_vmstat(const Fs& fs);
/// /proc/meminfo (KiB for " kB" keys, see parse_meminfo). Throws IoError/ParseError.
KeyedValues read_meminfo(const Fs& fs);

/// Writes /proc/<pid>/oom_score_adj (-1000..1000; -1000 = never OOM-killed). pid 0 = self.
WriteResult write_oom_score_adj(const Fs& fs, int value, pid_t pid = 0);
/// Reads /proc/<pid>/oom_score_adj. pid 0 = self. Throws IoError/ParseError.
int read_oom_score_adj(const Fs& fs, pid_t pid = 0);

/// /proc/sys/kernel/osrelease, e.g. "6.1.0-57-cloud-amd64"; falls back to the third word
/// of /proc/version ("Linux version <release> ..."). Throws IoError when neither is readable.
std::string kernel_release(const Fs& fs);
/// /proc/cmdline without the trailing newline. Throws IoError.
std::string kernel_cmdline(const Fs& fs);

/// A sysfs choice file "a [b] c" (THP enabled, zram comp_algorithm).
struct BracketChoice {
  std::string selected;              ///< the bracketed word ("" if none bracketed)
  std::vector<std::string> available;  ///< all words, brackets removed, file order
};
/// Parses "a [b] c". Throws ParseError when more than one word is bracketed.
BracketChoice parse_bracket_choice(std::string_view text, const std::string& file);

/// /sys/kernel/mm/transparent_hugepage/enabled.
BracketChoice read_thp_enabled(const Fs& fs);
/// /proc/sys/vm/swappiness (0..200).
int read_swappiness(const Fs& fs);
/// /sys/devices/system/clocksource/clocksource0/current_clocksource.
std::string read_clocksource(const Fs& fs);
/// /sys/kernel/mm/lru_gen/enabled as text ("0x0007"); nullopt when the file is absent
/// (kernel without CONFIG_LRU_GEN).
std::optional<std::string> read_mglru_enabled(const Fs& fs);
/// Number of online CPUs from /sys/devices/system/cpu/online ("0", "0-1", "0,2-3"); falls
/// back to counting "processor" lines of /proc/cpuinfo. Throws IoError when neither exists.
unsigned read_online_cpus(const Fs& fs);
/// Parses a CPU list "0-3,5" into a count. Throws ParseError.
unsigned parse_cpu_list_count(std::string_view text, const std::string& file);

}  // namespace harness::kernel
