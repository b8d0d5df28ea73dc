#pragma once
// One canary request as recorded in the trace; fields align with the results schema
// table canary_requests (results/schema.sql). Times are CLOCK_MONOTONIC ns.
#include <cstdint>

namespace canaries {

/// A recorded request. completion_ns == 0: the request never completed.
struct TraceRecord {
  std::uint64_t seq = 0;           ///< 0-based request index; scheduled = origin + seq * period
  std::int64_t scheduled_ns = 0;   ///< scheduled start (absolute schedule)
  std::int64_t wake_ns = 0;        ///< actual wake (execution begins)
  std::int64_t completion_ns = 0;  ///< completion; 0 = never completed
  std::int64_t minflt = 0;         ///< getrusage(RUSAGE_THREAD) deltas over the request
  std::int64_t majflt = 0;
  std::int64_t nvcsw = 0;
  std::int64_t nivcsw = 0;
  bool operator==(const TraceRecord&) const = default;
};

}  // namespace canaries
