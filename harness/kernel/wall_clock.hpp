#pragma once
// The wall clock of records, in ns since the Unix epoch: the one helper for it (the campaign
// DB's planned_unix_ns and attempts, the case executor's records, a guest's owner mark).
#include <cstdint>
#include <ctime>

namespace harness::kernel {

/// CLOCK_REALTIME now, ns since 1970-01-01 UTC. For the time a record was made, never for
/// an interval (it jumps with the system clock): intervals use monotonic_ns (fs.hpp).
inline std::int64_t unix_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace harness::kernel
