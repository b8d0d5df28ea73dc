#pragma once
// The case's schedule on CLOCK_MONOTONIC (SPEC.md "Executor decisions" and "Version 2
// additions"): origin T0, phase boundaries, the two canaries' schedule origins and the
// telemetry/controller ticks. Pure arithmetic, unit-tested.
//
//   compute canary origin  = T0
//   SQLite canary origin   = T0 + canaries.sqlite_offset_ms   (default 50 ms)
//   tick k                 = T0 + telemetry_offset_ms + k x telemetry_period_ms  (25 ms, 1000 ms)
//   phases                 = [T0, T0+W) warmup, [T0+W, T0+W+P) pressure, [.., +R) recovery
// With 100 ms canary periods the canaries wake at +0/+50 ms and the ticks at +25 ms: no
// two of the three share a wake-up on the single vCPU.
#include <cstdint>

#include "harness/case/spec/spec.hpp"

namespace harness::case_ {

/// One second and one millisecond in ns (the case's CLOCK_MONOTONIC arithmetic).
inline constexpr std::int64_t kSec = 1'000'000'000;
inline constexpr std::int64_t kMs = 1'000'000;

struct CaseClock {
  std::int64_t origin_ns = 0;          ///< T0, CLOCK_MONOTONIC ns
  std::int64_t pressure_start_ns = 0;  ///< T0 + W
  std::int64_t pressure_end_ns = 0;    ///< T0 + W + P
  std::int64_t end_ns = 0;             ///< T0 + W + P + R
  std::int64_t period_ns = 0;          ///< telemetry period, ns
  std::int64_t tick_offset_ns = 0;     ///< telemetry offset, ns
  std::int64_t sqlite_offset_ns = 0;   ///< SQLite canary offset, ns

  /// The schedule of `spec` from origin `t0_ns`.
  static CaseClock from(const CaseSpec& spec, std::int64_t t0_ns);

  /// Tick k (k >= 0): T0 + offset + k x period, ns.
  std::int64_t tick(std::int64_t k) const { return origin_ns + tick_offset_ns + k * period_ns; }
  /// Smallest k whose tick is >= t_ns (0 when t_ns <= tick(0)).
  std::int64_t first_tick_at_or_after(std::int64_t t_ns) const;
  /// Schedule origin of canary-compute (= T0) and canary-sqlite (= T0 + offset), ns.
  std::int64_t compute_origin_ns() const { return origin_ns; }
  std::int64_t sqlite_origin_ns() const { return origin_ns + sqlite_offset_ns; }
  /// "warmup" | "pressure" | "recovery" for a tick at t_ns (by the scheduled boundaries).
  const char* phase_of(std::int64_t t_ns) const;
};

}  // namespace harness::case_
