// The tick loop (harness/case/run/tick_loop.hpp) on a fake clock and sleeper: ticks at their
// scheduled times, the overrun rule (skip what is past, never catch up, count it), the
// pressure edges, cancellation and a driver that stops, and the phase rows they leave.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "harness/case/run/tick_loop.hpp"

namespace {

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kMs = 1'000'000;

/// A clock that jumps to each sleep's target; work takes what `cost` says for a tick index.
class FakeClock : public harness::case_::TickClock {
 public:
  std::int64_t now = 0;
  std::vector<std::int64_t> sleeps;          ///< every target asked for
  std::optional<std::int64_t> cancel_at;     ///< a sleep to this target or later is cancelled
  std::int64_t now_ns() override { return now; }
  bool sleep_until(std::int64_t t) override {
    sleeps.push_back(t);
    if (cancel_at && t >= *cancel_at) {
      now = std::max(now, *cancel_at);
      return false;
    }
    now = std::max(now, t);  // an absolute sleep to a past time returns at once
    return true;
  }
};

/// W = 3 s, P = 4 s, R = 2 s from T0 = 100 s; ticks at T0 + 25 ms + k s (k = 0..8).
harness::case_::CaseClock clock_3_4_2() {
  harness::case_::CaseClock c;
  c.origin_ns = 100 * kS;
  c.pressure_start_ns = c.origin_ns + 3 * kS;
  c.pressure_end_ns = c.pressure_start_ns + 4 * kS;
  c.end_ns = c.pressure_end_ns + 2 * kS;
  c.period_ns = kS;
  c.tick_offset_ns = 25 * kMs;
  return c;
}

/// Runs the loop; each tick's work advances the fake clock by cost[k] (default 10 ms).
struct Run {
  std::vector<harness::case_::Tick> ticks;
  harness::case_::TickLoopResult result;
};
Run run(const harness::case_::CaseClock& clk, FakeClock& fc, std::map<std::int64_t, std::int64_t> cost = {},
        std::optional<std::int64_t> stop_at_k = std::nullopt) {
  Run r;
  r.result = harness::case_::run_ticks(clk, fc, [&](const harness::case_::Tick& t) {
    r.ticks.push_back(t);
    fc.now += cost.count(t.k) ? cost[t.k] : 10 * kMs;
    return stop_at_k && t.k == *stop_at_k ? harness::case_::TickVerdict::Stop : harness::case_::TickVerdict::Continue;
  });
  return r;
}

std::vector<std::int64_t> ks(const Run& r) {
  std::vector<std::int64_t> out;
  for (const auto& t : r.ticks) out.push_back(t.k);
  return out;
}

}  // namespace

TEST(TickLoop, EveryTickAtItsScheduledTimeUpToTheEndOfRecovery) {
  const auto clk = clock_3_4_2();
  FakeClock fc;
  const auto r = run(clk, fc);
  ASSERT_EQ(r.ticks.size(), 9u);  // T0 + 25 ms + 0..8 s; tick 9 (T0 + 9.025 s) is after the end
  for (std::size_t k = 0; k < r.ticks.size(); ++k) {
    EXPECT_EQ(r.ticks[k].k, static_cast<std::int64_t>(k));
    EXPECT_EQ(r.ticks[k].t_ns, clk.tick(static_cast<std::int64_t>(k)));
    EXPECT_EQ(fc.sleeps[k], clk.tick(static_cast<std::int64_t>(k)));
    EXPECT_EQ(r.ticks[k].missed_before, 0);
  }
  EXPECT_EQ(fc.sleeps.size(), 9u);
  EXPECT_STREQ(r.ticks[2].phase, "warmup");
  EXPECT_STREQ(r.ticks[3].phase, "pressure");
  EXPECT_STREQ(r.ticks[6].phase, "pressure");
  EXPECT_STREQ(r.ticks[7].phase, "recovery");
  EXPECT_EQ(r.result.ticks, 9);
  EXPECT_EQ(r.result.missed_total, 0);
  EXPECT_FALSE(r.result.cancelled);
  EXPECT_FALSE(r.result.stopped_at_ns);
}

TEST(TickLoop, PressureOpensAtTheFirstPressureTickAndClosesAtTheFirstAfterIt) {
  const auto clk = clock_3_4_2();
  FakeClock fc;
  const auto r = run(clk, fc);
  ASSERT_EQ(r.ticks.size(), 9u);
  for (const auto& t : r.ticks) {
    EXPECT_EQ(t.opens_pressure, t.k == 3) << t.k;
    EXPECT_EQ(t.closes_pressure, t.k == 7) << t.k;
  }
}

TEST(TickLoop, AnOverrunSkipsThePastTicksCountsThemAndNeverCatchesUp) {
  const auto clk = clock_3_4_2();
  FakeClock fc;
  // Tick 1 (T0 + 1.025 s) works until T0 + 3.5 s: ticks 2 and 3 (T0 + 2.025, 3.025 s) are past.
  const auto r = run(clk, fc, {{1, 2 * kS + 475 * kMs}});
  EXPECT_EQ(ks(r), (std::vector<std::int64_t>{0, 1, 4, 5, 6, 7, 8}));
  ASSERT_EQ(r.ticks.size(), 7u);
  EXPECT_EQ(r.ticks[2].missed_before, 2);  // reported on the next tick worked, once
  EXPECT_EQ(r.ticks[3].missed_before, 0);
  EXPECT_EQ(r.result.missed_total, 2);
  EXPECT_EQ(r.result.ticks, 7);
  // Tick 3 opened no pressure: the first tick worked in the pressure phase does.
  EXPECT_TRUE(r.ticks[2].opens_pressure);
  EXPECT_STREQ(r.ticks[2].phase, "pressure");
}

TEST(TickLoop, WorkEndingExactlyAtTheNextTickMissesNothing) {
  const auto clk = clock_3_4_2();
  FakeClock fc;
  const auto r = run(clk, fc, {{0, kS}});  // tick 0 at T0 + 25 ms, work 1 s: now = tick 1
  EXPECT_EQ(ks(r), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(r.result.missed_total, 0);
}

TEST(TickLoop, TicksPastTheEndOfRecoveryAreNotCountedAsMissed) {
  const auto clk = clock_3_4_2();
  FakeClock fc;
  // Tick 6's work runs 10 s: ticks 7 and 8 are missed; 9.. are after the end.
  const auto r = run(clk, fc, {{6, 10 * kS}});
  EXPECT_EQ(ks(r), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(r.result.missed_total, 2);
  EXPECT_FALSE(r.result.stopped_at_ns) << "running out of schedule is not a stop";
  // Pressure opened and was never closed by a tick: pressure-gen's TERM comes from the
  // executor's end-of-schedule handling then, not from a tick.
  for (const auto& t : r.ticks) EXPECT_FALSE(t.closes_pressure);
}

TEST(TickLoop, CancellationStopsTheSleepAndEndsThePhaseThere) {
  const auto clk = clock_3_4_2();
  FakeClock fc;
  fc.cancel_at = clk.pressure_start_ns + 1500 * kMs;  // during the sleep to tick 5
  const auto r = run(clk, fc);
  EXPECT_EQ(ks(r), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(r.result.cancelled);
  ASSERT_TRUE(r.result.stopped_at_ns);
  EXPECT_EQ(*r.result.stopped_at_ns, *fc.cancel_at);
  const auto phases = harness::case_::schedule_phases(clk, r.result.stopped_at_ns);
  ASSERT_EQ(phases.size(), 2u);  // recovery never began
  EXPECT_EQ(phases[0].phase, "warmup");
  EXPECT_EQ(phases[0].start_ns, clk.origin_ns);
  EXPECT_EQ(phases[0].end_ns, clk.pressure_start_ns);
  EXPECT_EQ(phases[1].phase, "pressure");
  EXPECT_EQ(phases[1].start_ns, clk.pressure_start_ns);
  EXPECT_EQ(phases[1].end_ns, *fc.cancel_at);
}

TEST(TickLoop, ADriverThatStopsEndsTheScheduleAtThatTick) {
  const auto clk = clock_3_4_2();
  FakeClock fc;
  const auto r = run(clk, fc, {}, 3);  // e.g. pressure-gen could not be started
  EXPECT_EQ(ks(r), (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_FALSE(r.result.cancelled);
  ASSERT_TRUE(r.result.stopped_at_ns);
  EXPECT_EQ(*r.result.stopped_at_ns, clk.tick(3) + 10 * kMs);  // after that tick's work
  EXPECT_EQ(fc.sleeps.size(), 4u) << "slept again after the driver stopped";
}

TEST(TickLoop, PhaseRowsOfACompleteScheduleAreTheScheduledBoundaries) {
  const auto clk = clock_3_4_2();
  const auto phases = harness::case_::schedule_phases(clk, std::nullopt);
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_EQ(phases[2].phase, "recovery");
  EXPECT_EQ(phases[2].start_ns, clk.pressure_end_ns);
  EXPECT_EQ(phases[2].end_ns, clk.end_ns);
  // Stopped during warmup: only warmup, ended at the stop.
  const auto early = harness::case_::schedule_phases(clk, clk.origin_ns + kS);
  ASSERT_EQ(early.size(), 1u);
  EXPECT_EQ(early[0].end_ns, clk.origin_ns + kS);
}
