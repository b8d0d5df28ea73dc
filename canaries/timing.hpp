#pragma once
// Definitions of the canary timing components (study; docs/DESIGN.md "Canaries"):
//   wake delay    = wake - scheduled         (scheduled start until execution begins)
//   service time  = completion - wake        (execution begins until completion)
//   response time = completion - scheduled
//   deadline miss = completion > next scheduled start (= scheduled + period);
//                   completing exactly at the next start is not a miss.
// All in ns of CLOCK_MONOTONIC. A completion of 0 means "never completed".
#include <cstdint>

namespace canaries {

/// wake - scheduled, ns.
constexpr std::int64_t wake_delay_ns(std::int64_t scheduled_ns, std::int64_t wake_ns) {
  return wake_ns - scheduled_ns;
}
/// completion - wake, ns.
constexpr std::int64_t service_time_ns(std::int64_t wake_ns, std::int64_t completion_ns) {
  return completion_ns - wake_ns;
}
/// completion - scheduled, ns.
constexpr std::int64_t response_time_ns(std::int64_t scheduled_ns, std::int64_t completion_ns) {
  return completion_ns - scheduled_ns;
}
/// True when the request completed after the next scheduled start (scheduled + period).
/// A request that never completed (completion_ns == 0) is not classified here: the
/// summary counts it as "incomplete".
constexpr bool is_deadline_miss(std::int64_t scheduled_ns, std::int64_t period_ns,
                                std::int64_t completion_ns) {
  return completion_ns != 0 && completion_ns > scheduled_ns + period_ns;
}

}  // namespace canaries
