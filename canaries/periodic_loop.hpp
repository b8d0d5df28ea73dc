#pragma once
// The canaries' shared periodic loop (study; docs/DESIGN.md "Canaries").
//
// Request `seq` is scheduled at origin_ns + seq * period_ns, fixed in advance: the loop
// sleeps with an absolute deadline (Clock::sleep_until_ns), and a request that overruns
// never shifts later scheduled starts. A late request is neither skipped nor re-based
// (no coordinated omission): it runs as soon as the previous one completes and is timed
// from its scheduled start. (cyclictest, by contrast, skips missed periods.)
//
// Per request: wake = clock after the sleep returns; usage sample; work; completion =
// clock; usage sample; the record goes to the preallocated TraceBuffer (no I/O).
#include "canaries/clock.hpp"
#include "canaries/thread_usage.hpp"
#include "canaries/trace_buffer.hpp"

#include <cstdint>
#include <functional>

namespace canaries {

/// The schedule: `requests` starts, origin_ns + k * period_ns for k in [0, requests).
struct Schedule {
  std::int64_t origin_ns = 0;   ///< scheduled start of request 0, CLOCK_MONOTONIC ns
  std::int64_t period_ns = 0;   ///< > 0
  std::uint64_t requests = 0;   ///< number of scheduled requests
  /// Scheduled start of request `seq`, ns.
  std::int64_t start_ns(std::uint64_t seq) const {
    return origin_ns + static_cast<std::int64_t>(seq) * period_ns;
  }
};

/// How the loop ended.
struct LoopResult {
  std::uint64_t requests_run = 0;  ///< requests that ran to completion
  bool stopped = false;            ///< true when `stop` returned true before the schedule ended
};

/// The work of one request; gets the request index. May throw: the loop stops and
/// rethrows, with every completed request already in the buffer.
using RequestFn = std::function<void(std::uint64_t seq)>;

/// Runs the schedule. `stop` is polled before each request and after each interrupted
/// sleep; a request in progress always completes. Throws std::invalid_argument when
/// period_ns <= 0.
LoopResult run_periodic(const Schedule& schedule, Clock& clock, UsageSource& usage, TraceBuffer& trace,
                        const RequestFn& request, const std::function<bool()>& stop);

}  // namespace canaries
