// The case's tick loop: phase clock, overrun rule, cancellation (tick_loop.hpp).
#include "harness/case/run/tick_loop.hpp"

#include "harness/case/run/cancel_signal.hpp"
#include "harness/kernel/fs.hpp"

namespace harness::case_ {

std::int64_t MonotonicTickClock::now_ns() { return harness::kernel::monotonic_ns(); }

bool MonotonicTickClock::sleep_until(std::int64_t t_ns) { return sleep_until_or_cancelled(t_ns); }

TickLoopResult run_ticks(const CaseClock& clk, TickClock& clock, const TickDriver& drive) {
  TickLoopResult r;
  bool pressure_opened = false, pressure_closed = false;
  std::int64_t k = 0, missed = 0;
  for (;;) {
    const std::int64_t t = clk.tick(k);
    if (t > clk.end_ns) break;
    if (!clock.sleep_until(t)) {
      r.cancelled = true;
      r.stopped_at_ns = clock.now_ns();
      break;
    }
    Tick tick;
    tick.k = k;
    tick.t_ns = t;
    tick.phase = clk.phase_of(t);
    tick.missed_before = missed;
    missed = 0;
    if (!pressure_opened && t >= clk.pressure_start_ns && t < clk.pressure_end_ns) {
      tick.opens_pressure = pressure_opened = true;
    } else if (pressure_opened && !pressure_closed && t >= clk.pressure_end_ns) {
      tick.closes_pressure = pressure_closed = true;
    }
    ++r.ticks;
    if (drive(tick) == TickVerdict::Stop) {
      r.stopped_at_ns = clock.now_ns();
      break;
    }
    // Overrun: skip every tick already past; never catch up.
    const std::int64_t now = clock.now_ns();
    std::int64_t next = k + 1;
    while (clk.tick(next) < now && clk.tick(next) <= clk.end_ns) ++next, ++missed, ++r.missed_total;
    k = next;
  }
  return r;
}

std::vector<PhaseRecord> schedule_phases(const CaseClock& clk, std::optional<std::int64_t> stopped_at_ns) {
  std::vector<PhaseRecord> out;
  auto add = [&](const char* name, std::int64_t a, std::int64_t z) {
    if (stopped_at_ns && *stopped_at_ns < a) return;
    out.push_back({name, a, stopped_at_ns && *stopped_at_ns < z ? *stopped_at_ns : z});
  };
  add("warmup", clk.origin_ns, clk.pressure_start_ns);
  add("pressure", clk.pressure_start_ns, clk.pressure_end_ns);
  add("recovery", clk.pressure_end_ns, clk.end_ns);
  return out;
}

}  // namespace harness::case_
