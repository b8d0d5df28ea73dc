#pragma once
// Flat "key value" files: memory.stat, memory.events, cgroup.events, /proc/vmstat,
// and "Key:   value kB" /proc/meminfo. Unknown keys are kept; a missing key is absent
// (std::nullopt), never zero (docs/DESIGN.md "The kernel-interface layer").
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace harness::kernel {

/// All keys of a flat keyed file, in file order-independent (sorted) map.
struct KeyedValues {
  std::map<std::string, std::uint64_t> values;
  /// The value of `key`, or nullopt when the file had no such key.
  std::optional<std::uint64_t> get(std::string_view key) const;
  bool has(std::string_view key) const { return get(key).has_value(); }
};

/// Parses lines "<key> <unsigned integer>" (memory.stat, memory.events, vmstat,
/// cgroup.events). Blank lines are skipped. `file` names the source in errors.
/// Throws ParseError(file, line, key) on a line without exactly two fields, a
/// non-numeric value, or a key that appears twice.
KeyedValues parse_keyed(std::string_view text, const std::string& file);

/// Reads only the values of `keys[0..n)` from a flat keyed file (memory.stat, memory.events,
/// /proc/vmstat) in one pass, without building the map: `out[i]` = the value of `keys[i]`,
/// nullopt when the file has no such key (never zero). Every line must still have two fields;
/// values of other keys are not parsed. Throws ParseError(file, line, key) on a line without
/// exactly two fields, a non-numeric value of a wanted key, or a wanted key that appears twice.
/// Allocates nothing unless it throws (for files read every tick).
void pick_keyed(std::string_view text, const std::string& file, const std::string_view* keys,
                std::optional<std::uint64_t>* out, std::size_t n);

/// Parses /proc/meminfo: "<Key>: <n>[ kB]". Values with " kB" are KiB; the others
/// (HugePages_Total, HugePages_Free, ...) are plain counts. Throws ParseError.
KeyedValues parse_meminfo(std::string_view text, const std::string& file);

/// Parses an unsigned decimal integer (whole string, no sign, no spaces).
/// Throws ParseError(file, line, field) otherwise.
std::uint64_t parse_u64(std::string_view s, const std::string& file, int line,
                        const std::string& field);

}  // namespace harness::kernel
