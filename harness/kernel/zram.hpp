#pragma once
// zram devices (Documentation/admin-guide/blockdev/zram.rst): hot_add/hot_remove via
// /sys/class/zram-control, disksize, comp_algorithm, initstate, mm_stat, reset.
// Order that works: [reset] -> comp_algorithm -> disksize -> harness::kernel::mkswap(dev_path())
// -> harness::kernel::swapon(dev_path(), priority) (swap.hpp). Teardown: swapoff -> reset.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/kernel/fs.hpp"
#include "harness/kernel/procfs.hpp"

namespace harness::kernel {

/// /sys/block/zramN/mm_stat (6.1: 9 columns; older kernels have fewer trailing ones).
struct ZramMmStat {
  std::uint64_t orig_data_size_bytes = 0;   ///< uncompressed data stored
  std::uint64_t compr_data_size_bytes = 0;  ///< compressed size
  std::uint64_t mem_used_total_bytes = 0;   ///< memory used incl. allocator overhead
  std::uint64_t mem_limit_bytes = 0;        ///< 0 = no limit
  std::uint64_t mem_used_max_bytes = 0;     ///< high-water mark
  std::uint64_t same_pages = 0;             ///< pages that were same-filled (not stored)
  std::uint64_t pages_compacted = 0;
  std::optional<std::uint64_t> huge_pages;        ///< incompressible pages (4.x+)
  std::optional<std::uint64_t> huge_pages_since;  ///< since 5.16
};
/// Parses mm_stat. Throws ParseError naming the column when fewer than 7 numeric columns.
ZramMmStat parse_zram_mm_stat(std::string_view text, const std::string& file);

/// One zram device, /sys/block/zram<id>, under an Fs root.
class Zram {
 public:
  Zram(Fs fs, int id);
  int id() const { return id_; }
  /// "sys/block/zram<id>" relative to the Fs root.
  std::string sysfs_dir() const;
  /// "/dev/zram<id>" (the path swapon and /proc/swaps use).
  std::string dev_path() const;
  bool exists() const;

  /// Reads /sys/class/zram-control/hot_add: creates a device and returns it.
  /// Throws IoError (ENOENT: zram module not loaded).
  static Zram hot_add(const Fs& fs);
  /// Writes the id to /sys/class/zram-control/hot_remove (EBUSY while in use).
  WriteResult hot_remove() const;

  /// comp_algorithm: selected and available (e.g. [lzo-rle] among lzo lz4 lz4hc zstd).
  BracketChoice comp_algorithm() const;
  /// Writes the algorithm; EBUSY once initialised (reset first), EINVAL unknown name.
  WriteResult set_comp_algorithm(const std::string& name) const;
  /// disksize in bytes (0 = unconfigured).
  std::uint64_t disksize_bytes() const;
  /// Writes disksize with a unit suffix; EBUSY when already initialised.
  WriteResult set_disksize(std::uint64_t bytes) const;
  /// initstate: true once disksize has been set.
  bool initialized() const;
  ZramMmStat mm_stat() const;
  /// Writes "1" to reset: frees all memory; EBUSY while the device is swapped on.
  WriteResult reset() const;

 private:
  Fs fs_;
  int id_;
};

/// Ids of existing zram devices (sys/block/zram*), ascending. Empty when none.
std::vector<int> list_zram_devices(const Fs& fs);
/// True when /sys/class/zram-control exists (zram module loaded).
bool zram_control_present(const Fs& fs);

}  // namespace harness::kernel
