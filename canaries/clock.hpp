#pragma once
// Time source of the canaries' periodic loop (docs/DESIGN.md "Canaries": absolute schedule,
// clock_nanosleep(TIMER_ABSTIME) on CLOCK_MONOTONIC). An interface so that unit tests
// inject a fake clock and check the timing math without sleeping.
#include <cstdint>

namespace canaries {

/// A monotonic time source in nanoseconds with absolute sleeps.
class Clock {
 public:
  virtual ~Clock() = default;
  /// Current time, ns (CLOCK_MONOTONIC for the real clock).
  virtual std::int64_t now_ns() = 0;
  /// Sleeps until the absolute time `t_ns` (returns at once when t_ns is past).
  /// Returns true when the time was reached, false when a signal interrupted the
  /// sleep first (EINTR); the caller re-checks its stop flag and sleeps again.
  virtual bool sleep_until_ns(std::int64_t t_ns) = 0;
};

/// The real clock: clock_gettime / clock_nanosleep(TIMER_ABSTIME) on CLOCK_MONOTONIC.
/// clock_nanosleep is never restarted after a signal handler (signal(7)), so a
/// SIGTERM wakes the loop promptly.
class MonotonicClock final : public Clock {
 public:
  std::int64_t now_ns() override;
  bool sleep_until_ns(std::int64_t t_ns) override;
};

/// CLOCK_MONOTONIC now, ns.
std::int64_t monotonic_now_ns();

}  // namespace canaries
