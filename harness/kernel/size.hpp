#pragma once
// Byte sizes as cgroup v2 and zram sysfs write/read them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace harness::kernel {

/// Bytes in one MiB (1024 x 1024); signed, as the case spec counts bytes (std::int64_t).
inline constexpr std::int64_t kMiB = 1024 * 1024;

/// A memory.max / memory.high / memory.swap.max value: a byte count or "max".
struct MemoryLimit {
  std::optional<std::uint64_t> bytes;  ///< nullopt = "max" (no limit)
  static MemoryLimit unlimited() { return {}; }
  static MemoryLimit of_bytes(std::uint64_t b) { return {b}; }
  bool is_max() const { return !bytes.has_value(); }
  bool operator==(const MemoryLimit&) const = default;
};

/// Formats bytes for a cgroup/zram write using the largest exact unit suffix:
/// 100663296 -> "96M", 1073741824 -> "1G", 1536 -> "1536" (K/M/G are powers of 1024,
/// as memparse() in the kernel reads them).
std::string format_size_suffix(std::uint64_t bytes);

/// "max" or decimal bytes (the text a memory.max write takes).
std::string format_limit(const MemoryLimit& l);

/// Parses "max" or a decimal byte count (memory.max, memory.high, memory.swap.max read-back).
/// Throws ParseError(file, 1, field).
MemoryLimit parse_limit(std::string_view text, const std::string& file, const std::string& field);

/// Parses a human size "96M", "1G", "512K", "4096" or "96MiB" (K/M/G/T, optional "iB",
/// powers of 1024) into bytes; for CLI flags and configs. Throws std::invalid_argument
/// naming `what` on bad input.
std::uint64_t parse_human_size(std::string_view text, const std::string& what);

}  // namespace harness::kernel
