#pragma once
// The zram device the harness owns (ours; docs/PROTOCOL.md "Swap devices the harness owns").
//
// The harness creates its own device with /sys/class/zram-control/hot_add (the number read
// back is the device) and removes it with hot_remove at restoration. It never swaps off,
// resets or removes a zram device it did not create: zram0 of zram-tools, a distro zram
// generator or log2ram is "foreign" and only reported (qualification).
//
// Which device is the harness's survives a crash of the executor through a marker file,
// <root>/run/reclaim-harness/zram-device (text, one "key value" per line):
//     id 1
//     boot_id 5b0c...            (/proc/sys/kernel/random/boot_id when the device was taken)
//     how hot_add                (hot_add | unused-device)
// /run is a tmpfs, and a hot-added device dies with the boot too; a marker of another
// boot (boot_id differs) or naming a device that no longer exists is stale. The marker is
// written right after hot_add returns, and removed once the device is gone (hot_add) or
// reset (unused-device). A crash between hot_add and the marker write leaks one
// unconfigured device (harmless; not touched by later cases).
//
// Fallback without zram-control (a zram module without hot_add/hot_remove, or sysfs
// without the class): the harness borrows the lowest-numbered device that is unused
// (initstate 0, disksize 0, not in /proc/swaps or /proc/mounts, no holders) - such spare
// devices exist when zram is loaded with num_devices=N - marks it "unused-device", and at
// restoration resets it instead of removing it.
//
// Resets and hot_remove can fail with a transient EBUSY while udev/blkid probe the device
// after swapoff; retry_on_ebusy() retries them a bounded number of times with backoff.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/kernel/fs.hpp"

namespace harness::kernel {

/// How the harness came to own its device.
enum class ZramOrigin {
  HotAdd,        ///< created through zram-control/hot_add: hot_remove at the end
  UnusedDevice,  ///< fallback without zram-control: a spare device, reset at the end
};
/// "hot_add" | "unused-device".
const char* to_string(ZramOrigin o);

/// Content of the ownership marker.
struct ZramOwnership {
  int id = -1;
  std::string boot_id;  ///< "" when the kernel does not expose it
  ZramOrigin how = ZramOrigin::HotAdd;
};

/// The marker's path relative to the Fs root.
inline constexpr const char* kZramOwnerFile = "run/reclaim-harness/zram-device";

/// /proc/sys/kernel/random/boot_id without the newline; "" when unreadable.
std::string current_boot_id(const Fs& fs);

/// Reads the marker. nullopt when absent. Throws ParseError (names the file, line, field)
/// when it exists but is not in the format above.
std::optional<ZramOwnership> read_zram_owner(const Fs& fs);
/// Writes the marker (creating run/reclaim-harness/, replacing it atomically).
/// Throws IoError.
void write_zram_owner(const Fs& fs, const ZramOwnership& o);
/// Removes the marker; true when it existed.
bool remove_zram_owner(const Fs& fs);

/// True when `o` is of this boot (or neither side knows a boot id) and its device exists.
bool zram_owner_current(const Fs& fs, const ZramOwnership& o);
/// The harness's device right now: the marker when it is current, else nullopt.
/// Never throws: an unreadable or malformed marker counts as none.
std::optional<ZramOwnership> owned_zram(const Fs& fs);

/// Lowest id of a zram device nobody uses (initstate 0, disksize 0, not in /proc/swaps,
/// not a mount source in /proc/mounts, sys/block/zramN/holders empty); nullopt when none.
std::optional<int> find_unused_zram(const Fs& fs);

/// Backoff of retry_on_ebusy: one wait per retry, in ns. Default 25, 50, 100, 200, 400,
/// 800 ms (6 retries, ~1.6 s in all; udev/blkid probing takes milliseconds: ours).
struct BusyRetryPolicy {
  std::vector<std::int64_t> delays_ns{25'000'000, 50'000'000, 100'000'000, 200'000'000, 400'000'000, 800'000'000};
};

/// Outcome of a retried write.
struct RetriedWrite {
  WriteResult result;   ///< the last attempt
  int retries = 0;      ///< attempts after the first
  std::int64_t waited_ns = 0;  ///< time slept between attempts
};

/// Runs `op`; while it fails with EBUSY and the policy has a delay left, sleeps that
/// delay and runs it again. Any other errno (or success) ends at once.
RetriedWrite retry_on_ebusy(const std::function<WriteResult()>& op, const BusyRetryPolicy& policy = {});

}  // namespace harness::kernel
