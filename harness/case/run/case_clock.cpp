// The case schedule (rules: SPEC.md "Version 2 additions").
#include "harness/case/run/case_clock.hpp"

namespace harness::case_ {

CaseClock CaseClock::from(const CaseSpec& spec, std::int64_t t0_ns) {
  CaseClock c;
  c.origin_ns = t0_ns;
  c.pressure_start_ns = t0_ns + spec.phases.warmup_s * kSec;
  c.pressure_end_ns = c.pressure_start_ns + spec.phases.pressure_s * kSec;
  c.end_ns = c.pressure_end_ns + spec.phases.recovery_s * kSec;
  c.period_ns = static_cast<std::int64_t>(spec.telemetry_period_ms) * kMs;
  c.tick_offset_ns = static_cast<std::int64_t>(spec.telemetry_offset_ms) * kMs;
  c.sqlite_offset_ns = static_cast<std::int64_t>(spec.canaries.sqlite_offset_ms) * kMs;
  return c;
}

std::int64_t CaseClock::first_tick_at_or_after(std::int64_t t_ns) const {
  const std::int64_t d = t_ns - tick(0);
  if (d <= 0) return 0;
  return (d + period_ns - 1) / period_ns;
}

const char* CaseClock::phase_of(std::int64_t t_ns) const {
  return t_ns < pressure_start_ns ? "warmup" : t_ns < pressure_end_ns ? "pressure" : "recovery";
}

}  // namespace harness::case_
