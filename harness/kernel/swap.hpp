#pragma once
// Swap devices: /proc/swaps, swapon(2) with priority, swapoff(2), swapfile validation.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/kernel/fs.hpp"

namespace harness::kernel {

/// One line of /proc/swaps. Sizes are KiB (as the kernel prints them).
struct SwapDevice {
  std::string path;  ///< "/dev/zram0", "/swapfile" (octal escapes like \040 decoded)
  std::string type;  ///< "partition" or "file"
  std::uint64_t size_kib = 0;
  std::uint64_t used_kib = 0;
  int priority = 0;  ///< higher is used first; negative = kernel-assigned default
};

/// Parses /proc/swaps (header line then one device per line). Throws ParseError.
std::vector<SwapDevice> parse_swaps(std::string_view text, const std::string& file);
/// The Used column (KiB) of the /proc/swaps row whose Filename (octal escapes decoded) is
/// `path`; nullopt when no row names it (not swapped on). The header and each row's five
/// fields are checked as parse_swaps does, the other rows' numbers are not parsed. Throws
/// ParseError. Allocates nothing unless it throws (read every tick by the telemetry).
std::optional<std::uint64_t> swap_used_kib(std::string_view text, const std::string& file, std::string_view path);
/// Reads /proc/swaps. Throws IoError/ParseError.
std::vector<SwapDevice> read_swaps(const Fs& fs);

/// swapon(2) of `path` (joined under the Fs root) with SWAP_FLAG_PREFER and `priority`
/// (0..32767; busybox swapon has no -p, docs/DESIGN.md "Configurations"). EBUSY = already active,
/// EINVAL = no swap signature or holes, EPERM = not root.
WriteResult swapon(const Fs& fs, const std::string& path, int priority);
/// swapoff(2): faults every swapped page back; can take long and can hit OOM (ENOMEM).
WriteResult swapoff(const Fs& fs, const std::string& path);

/// Writes a version-1 swap header (what mkswap(8) writes: version 1, last_page,
/// no bad pages, label empty, "SWAPSPACE2" at page_size-10) to the first page of an
/// existing file or block device (e.g. /dev/zram0 after disksize), whose size must be at
/// least 10 pages. Needed for zram, which is blank after every reset.
WriteResult mkswap(const Fs& fs, const std::string& path);

/// A process holding swapped-out memory: /proc/<pid>/status VmSwap > 0 (anonymous pages
/// of its address space that sit on some swap device; shmem/tmpfs swap is not counted).
struct SwapHolder {
  pid_t pid = 0;
  std::string name;   ///< status Name (comm)
  std::string state;  ///< status State, e.g. "T (stopped)", "S (sleeping)"
  std::uint64_t vm_swap_kib = 0;
  std::string cgroup;  ///< cgroup2 path from /proc/<pid>/cgroup ("0::<path>"), "" unknown
};
/// Every process with VmSwap > 0, largest VmSwap first. Processes that exit while being
/// read are skipped. Never throws for a single unreadable process; throws IoError when
/// proc/ cannot be listed. Used to say what holds memory when swapoff fails with ENOMEM.
std::vector<SwapHolder> swap_holders(const Fs& fs);
/// "pid 812 pressure-gen (T (stopped), cgroup /holder) 24576 KiB; ..." for the first
/// `max` holders, "+ N more" after; "no process has VmSwap > 0 (shmem/tmpfs pages or a
/// kernel user)" when empty.
std::string describe_swap_holders(const std::vector<SwapHolder>& holders, std::size_t max = 5);

/// Result of validate_swapfile: usable iff problems is empty.
struct SwapfileCheck {
  bool exists = false;
  std::uint64_t size_bytes = 0;       ///< st_size
  std::uint64_t allocated_bytes = 0;  ///< st_blocks * 512
  bool has_signature = false;         ///< "SWAPSPACE2" at page_size - 10
  std::vector<std::string> problems;  ///< human-readable, each says how to fix
  bool ok() const { return problems.empty(); }
};
/// Checks a swapfile without enabling it: a regular file, no holes
/// (st_blocks*512 >= st_size: docs/DESIGN.md "Facts from the kernel": write it with zeros, not fallocate/truncate),
/// at least 40 KiB, and the mkswap signature "SWAPSPACE2" at offset page_size-10.
/// Never throws for a missing/unreadable file (reported in problems).
SwapfileCheck validate_swapfile(const Fs& fs, const std::string& path);

}  // namespace harness::kernel
