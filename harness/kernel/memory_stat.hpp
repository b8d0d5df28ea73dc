#pragma once
// cgroup v2 memory.stat and memory.events, typed over the keyed map (keyed.hpp).
// Units: memory.stat sizes (anon, file, ...) are bytes; event keys (pgsteal, pgscan,
// pgfault, workingset_refault_*) are counts of pages/events (Documentation/admin-guide/
// cgroup-v2.rst). Missing keys are nullopt, never zero.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "harness/kernel/keyed.hpp"

namespace harness::kernel {

/// memory.stat: every key kept; typed accessors for the keys the study uses.
struct MemoryStat {
  KeyedValues all;
  std::optional<std::uint64_t> get(std::string_view key) const { return all.get(key); }
  std::optional<std::uint64_t> anon_bytes() const { return all.get("anon"); }
  std::optional<std::uint64_t> file_bytes() const { return all.get("file"); }
  /// Pages reclaimed, all reasons (kswapd + direct; 6.1 counts memory.reclaim in direct).
  std::optional<std::uint64_t> pgsteal() const { return all.get("pgsteal"); }
  std::optional<std::uint64_t> pgscan() const { return all.get("pgscan"); }
  std::optional<std::uint64_t> pgsteal_direct() const { return all.get("pgsteal_direct"); }
  std::optional<std::uint64_t> pgscan_direct() const { return all.get("pgscan_direct"); }
  std::optional<std::uint64_t> pgsteal_kswapd() const { return all.get("pgsteal_kswapd"); }
  std::optional<std::uint64_t> pgscan_kswapd() const { return all.get("pgscan_kswapd"); }
  std::optional<std::uint64_t> workingset_refault_anon() const {
    return all.get("workingset_refault_anon");
  }
  std::optional<std::uint64_t> workingset_refault_file() const {
    return all.get("workingset_refault_file");
  }
  std::optional<std::uint64_t> pgfault() const { return all.get("pgfault"); }
  std::optional<std::uint64_t> pgmajfault() const { return all.get("pgmajfault"); }
};

/// memory.events (or memory.events.local): low, high, max, oom, oom_kill, oom_group_kill.
struct MemoryEvents {
  KeyedValues all;
  std::optional<std::uint64_t> low() const { return all.get("low"); }
  std::optional<std::uint64_t> high() const { return all.get("high"); }
  std::optional<std::uint64_t> max() const { return all.get("max"); }
  std::optional<std::uint64_t> oom() const { return all.get("oom"); }
  std::optional<std::uint64_t> oom_kill() const { return all.get("oom_kill"); }
  std::optional<std::uint64_t> oom_group_kill() const { return all.get("oom_group_kill"); }
};

/// cgroup.events: populated (any process in the subtree), frozen.
struct CgroupEvents {
  KeyedValues all;
  std::optional<bool> populated() const;
  std::optional<bool> frozen() const;
};

/// Parsers (throw ParseError naming file/line/key).
MemoryStat parse_memory_stat(std::string_view text, const std::string& file);
MemoryEvents parse_memory_events(std::string_view text, const std::string& file);
CgroupEvents parse_cgroup_events(std::string_view text, const std::string& file);

}  // namespace harness::kernel
