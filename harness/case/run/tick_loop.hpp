#pragma once
// The tick loop of a case: the phase clock that runs warmup, pressure and recovery on
// absolute ticks of CLOCK_MONOTONIC (case_clock.hpp: tick k = T0 + offset + k x period),
// its overrun rule and its cancellation. What happens at a tick (the window read, the
// trigger, pressure-gen) is the driver's (measured_schedule.hpp); the clock and the sleep
// are an interface, so the rules below are unit-tested with a fake clock and sleeper.
//
// Rules (SPEC.md "Executor decisions"):
//   - ticks run from tick 0 up to the last tick at or before the end of recovery;
//   - each tick is an absolute sleep to its scheduled time, then the driver's work;
//   - overrun (ours): after a tick's work the loop goes on with the first scheduled tick
//     that is not yet past (tick >= now). The ticks it passes over are missed: skipped,
//     never caught up, counted (Tick::missed_before on the next tick worked, and
//     TickLoopResult::missed_total; ticks after the end of recovery are not counted). A
//     tick whose scheduled time equals now is not missed;
//   - a cancelling signal (cancel_signal.hpp) ends the sleep and the loop; so does a
//     driver that answers Stop (e.g. pressure-gen could not be started). Either way
//     stopped_at_ns is when it stopped, and the phase it was in ends there
//     (schedule_phases);
//   - pressure edges: the first tick worked in [pressure start, pressure end) opens the
//     pressure phase (pressure-gen starts after that tick's sample: the controller's
//     baseline); the first tick worked at or after pressure end, once a tick opened it,
//     closes it (pressure-gen gets SIGTERM).
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "harness/case/run/bundle.hpp"
#include "harness/case/run/case_clock.hpp"

namespace harness::case_ {

/// One tick as the driver sees it.
struct Tick {
  std::int64_t k = 0;              ///< index on the case clock
  std::int64_t t_ns = 0;           ///< scheduled time, CLOCK_MONOTONIC ns
  const char* phase = "warmup";    ///< warmup | pressure | recovery (CaseClock::phase_of)
  std::int64_t missed_before = 0;  ///< ticks skipped since the previous tick worked
  bool opens_pressure = false;     ///< first tick worked in [pressure start, pressure end)
  bool closes_pressure = false;    ///< first tick worked at or after pressure end, after one opened it
};

/// The clock and the sleep the loop runs on.
class TickClock {
 public:
  virtual ~TickClock() = default;
  /// CLOCK_MONOTONIC now, ns.
  virtual std::int64_t now_ns() = 0;
  /// Sleeps until `t_ns` (absolute, ns); false when the case was cancelled.
  virtual bool sleep_until(std::int64_t t_ns) = 0;
};

/// The real one: harness::kernel::monotonic_ns and sleep_until_or_cancelled (cancel_signal.hpp).
class MonotonicTickClock final : public TickClock {
 public:
  std::int64_t now_ns() override;
  bool sleep_until(std::int64_t t_ns) override;
};

enum class TickVerdict { Continue, Stop };
/// The work of one tick. Stop ends the schedule early (stopped_at_ns = now).
using TickDriver = std::function<TickVerdict(const Tick&)>;

struct TickLoopResult {
  std::int64_t ticks = 0;         ///< ticks worked
  std::int64_t missed_total = 0;  ///< ticks skipped by the overrun rule (none after the end of recovery)
  bool cancelled = false;         ///< a sleep was cut short by a cancelling signal
  /// When the loop stopped before the end of recovery (cancelled, or the driver said
  /// Stop), CLOCK_MONOTONIC ns; nullopt when the schedule ran to its end.
  std::optional<std::int64_t> stopped_at_ns;
};

/// Runs the schedule of `clk` on `clock`, calling `drive` at every tick worked.
TickLoopResult run_ticks(const CaseClock& clk, TickClock& clock, const TickDriver& drive);

/// The phase rows of the schedule (bundle `phases`): warmup, pressure and recovery at
/// their scheduled boundaries; when the loop stopped at `stopped_at_ns`, the phase it was
/// in ends there and the phases after it are left out.
std::vector<PhaseRecord> schedule_phases(const CaseClock& clk, std::optional<std::int64_t> stopped_at_ns);

}  // namespace harness::case_
