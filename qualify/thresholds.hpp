#pragma once
// Thresholds shared by `harness qualify` and the case executor's qualification at case
// start, so that a VM that passes qualify is not then refused by every case.
#include <cstdint>

namespace qualify {

/// Free space required on the filesystem that holds a case's out dir (bundle DB, traces;
/// on local guests also the swapfile and canary DB), MiB (ours). The default of
/// `harness qualify --min-free-disk`, of qualify::Options::min_free_disk_bytes and of
/// `harness case run --min-free-disk-mib`. The canary DB alone is ~125 MiB of payload
/// (80,000 x 1,536 B) plus index; local guests' data disk is 4096 MiB (`harness vm image
/// --disk-mib`), of which ~3.5 GiB are free.
inline constexpr std::uint64_t kMinFreeDiskMiB = 2048;

}  // namespace qualify
