// The shared periodic loop on an injected clock: timing math, no coordinated omission,
// deadline-miss rule, stop handling, bounded trace buffer.
#include "canaries/periodic_loop.hpp"
#include "canaries/summary.hpp"
#include "canaries/timing.hpp"
#include "fakes.hpp"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

using canaries::Schedule;
using canaries::TraceBuffer;
using workloads_test::FakeClock;
using workloads_test::FakeUsage;

namespace {
constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kUs = 1'000;
}  // namespace

TEST(PeriodicLoop, TimingMathOnInjectedClock) {
  FakeClock clock;
  clock.t = 5 * kMs;
  clock.wake_latency_ns = 50 * kUs;
  FakeUsage usage;
  Schedule s{10 * kMs, 100 * kMs, 5};
  TraceBuffer buf(5);
  auto res = canaries::run_periodic(
      s, clock, usage, buf,
      [&](std::uint64_t) {
        clock.t += 2 * kMs;  // service time 2 ms
        usage.cur.minflt += 3;
        usage.cur.majflt += 1;
        usage.cur.nvcsw += 2;
        usage.cur.nivcsw += 4;
      },
      [] { return false; });
  EXPECT_EQ(res.requests_run, 5u);
  EXPECT_FALSE(res.stopped);
  ASSERT_EQ(buf.size(), 5u);
  for (std::uint64_t k = 0; k < 5; ++k) {
    const auto& r = buf.records()[k];
    EXPECT_EQ(r.seq, k);
    EXPECT_EQ(r.scheduled_ns, 10 * kMs + static_cast<std::int64_t>(k) * 100 * kMs);
    EXPECT_EQ(canaries::wake_delay_ns(r.scheduled_ns, r.wake_ns), 50 * kUs);
    EXPECT_EQ(canaries::service_time_ns(r.wake_ns, r.completion_ns), 2 * kMs);
    EXPECT_EQ(canaries::response_time_ns(r.scheduled_ns, r.completion_ns), 2 * kMs + 50 * kUs);
    EXPECT_EQ(r.minflt, 3);
    EXPECT_EQ(r.majflt, 1);
    EXPECT_EQ(r.nvcsw, 2);
    EXPECT_EQ(r.nivcsw, 4);
  }
  // Every sleep targeted the absolute scheduled start.
  ASSERT_EQ(clock.sleep_targets.size(), 5u);
  for (std::size_t k = 0; k < 5; ++k) EXPECT_EQ(clock.sleep_targets[k], s.start_ns(k));

  const auto j = canaries::summarize({"compute", s.period_ns, s.origin_ns, 0}, buf.records());
  EXPECT_DOUBLE_EQ(j["wake_delay_us"]["p50"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(j["service_time_us"]["p99"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(j["response_time_us"]["max"].get<double>(), 2050.0);
  EXPECT_EQ(j["deadline_misses"].get<int>(), 0);
  EXPECT_EQ(j["minflt"].get<int>(), 15);
}

TEST(PeriodicLoop, LongRequestDoesNotMoveLaterSchedules) {
  FakeClock clock;
  clock.wake_latency_ns = 10 * kUs;
  FakeUsage usage;
  const std::int64_t P = 100 * kMs;
  Schedule s{0, P, 10};
  TraceBuffer buf(10);
  // Request 2 takes 350 ms, the others 20 ms.
  canaries::run_periodic(
      s, clock, usage, buf, [&](std::uint64_t seq) { clock.t += (seq == 2 ? 350 : 20) * kMs; },
      [] { return false; });
  ASSERT_EQ(buf.size(), 10u);  // none skipped
  const auto r = buf.records();
  for (std::uint64_t k = 0; k < 10; ++k) {
    EXPECT_EQ(r[k].seq, k);
    EXPECT_EQ(r[k].scheduled_ns, static_cast<std::int64_t>(k) * P) << "schedule moved at request " << k;
  }
  // Request 2: wakes on time, completes at 200.01 + 350 = 550.01 ms.
  EXPECT_EQ(r[2].wake_ns, 2 * P + 10 * kUs);
  EXPECT_EQ(r[2].completion_ns, 2 * P + 10 * kUs + 350 * kMs);
  // Requests 3, 4, 5 are overdue: each starts when the previous one completes (no
  // sleep, no latency added), and is timed from its own scheduled start.
  EXPECT_EQ(r[3].wake_ns, r[2].completion_ns);
  EXPECT_EQ(r[4].wake_ns, r[3].completion_ns);
  EXPECT_EQ(r[5].wake_ns, r[4].completion_ns);
  EXPECT_EQ(canaries::wake_delay_ns(r[3].scheduled_ns, r[3].wake_ns), 250 * kMs + 10 * kUs);
  EXPECT_EQ(canaries::response_time_ns(r[3].scheduled_ns, r[3].completion_ns), 270 * kMs + 10 * kUs);
  // r5 completes at 610.01 ms, so request 6 (600 ms) is late too; request 7 sleeps again.
  EXPECT_EQ(r[6].wake_ns, r[5].completion_ns);
  EXPECT_EQ(r[7].wake_ns, 7 * P + 10 * kUs);
  EXPECT_EQ(r[9].wake_ns, 9 * P + 10 * kUs);
  // Deadline misses: 2 (550 > 300), 3 (570 > 400), 4 (590 > 500); 5 completes at
  // 610.01 > 600: a miss; 6 completes at 630.01 <= 700: not a miss.
  std::map<std::uint64_t, bool> miss;
  for (const auto& rec : r) miss[rec.seq] = canaries::is_deadline_miss(rec.scheduled_ns, P, rec.completion_ns);
  EXPECT_FALSE(miss[1]);
  EXPECT_TRUE(miss[2]);
  EXPECT_TRUE(miss[3]);
  EXPECT_TRUE(miss[4]);
  EXPECT_TRUE(miss[5]);
  EXPECT_FALSE(miss[6]);
  const auto j = canaries::summarize({"compute", P, 0, 0}, r);
  EXPECT_EQ(j["deadline_misses"].get<int>(), 4);
}

TEST(DeadlineMiss, RuleIsCompletionAfterNextScheduledStart) {
  const std::int64_t s = 1'000 * kMs, P = 100 * kMs;
  EXPECT_FALSE(canaries::is_deadline_miss(s, P, s + P - 1));
  EXPECT_FALSE(canaries::is_deadline_miss(s, P, s + P));  // exactly at the next start: on time
  EXPECT_TRUE(canaries::is_deadline_miss(s, P, s + P + 1));
  EXPECT_FALSE(canaries::is_deadline_miss(s, P, 0));  // never completed: counted as incomplete
}

TEST(PeriodicLoop, StopEndsRunAfterCurrentRequest) {
  FakeClock clock;
  FakeUsage usage;
  Schedule s{0, 100 * kMs, 50};
  TraceBuffer buf(50);
  int calls = 0;
  auto res = canaries::run_periodic(
      s, clock, usage, buf, [&](std::uint64_t) { clock.t += kMs; }, [&] { return ++calls > 3; });
  EXPECT_TRUE(res.stopped);
  EXPECT_EQ(res.requests_run, 3u);
  EXPECT_EQ(buf.size(), 3u);
}

TEST(PeriodicLoop, InterruptedSleepRechecksStop) {
  FakeClock clock;
  clock.eintr_remaining = 1;  // the first sleep is interrupted by a "signal"
  FakeUsage usage;
  Schedule s{50 * kMs, 100 * kMs, 5};
  TraceBuffer buf(5);
  int polls = 0;
  bool ran = false;
  auto res = canaries::run_periodic(
      s, clock, usage, buf, [&](std::uint64_t) { ran = true; }, [&] { return ++polls > 1; });
  EXPECT_TRUE(res.stopped);
  EXPECT_FALSE(ran);
  EXPECT_EQ(buf.size(), 0u);
  // Without a stop, an interrupted sleep is simply resumed toward the same target.
  FakeClock c2;
  c2.eintr_remaining = 2;
  TraceBuffer b2(1);
  canaries::run_periodic({50 * kMs, 100 * kMs, 1}, c2, usage, b2, [](std::uint64_t) {}, [] { return false; });
  ASSERT_EQ(b2.size(), 1u);
  EXPECT_EQ(c2.sleep_targets, (std::vector<std::int64_t>{50 * kMs, 50 * kMs, 50 * kMs}));
  EXPECT_EQ(b2.records()[0].wake_ns, 50 * kMs);
}

TEST(PeriodicLoop, FullBufferCountsInsteadOfGrowing) {
  FakeClock clock;
  FakeUsage usage;
  TraceBuffer buf(3);
  auto res = canaries::run_periodic({0, 100 * kMs, 5}, clock, usage, buf, [](std::uint64_t) {}, [] { return false; });
  EXPECT_EQ(res.requests_run, 5u);
  EXPECT_EQ(buf.size(), 3u);
  EXPECT_EQ(buf.capacity(), 3u);
  EXPECT_EQ(buf.not_recorded(), 2u);
  EXPECT_EQ(buf.records()[2].seq, 2u);
}

TEST(PeriodicLoop, ThrowingRequestKeepsEarlierRecords) {
  FakeClock clock;
  FakeUsage usage;
  TraceBuffer buf(5);
  EXPECT_THROW(canaries::run_periodic(
                   {0, 100 * kMs, 5}, clock, usage, buf,
                   [](std::uint64_t seq) {
                     if (seq == 2) throw std::runtime_error("query failed");
                   },
                   [] { return false; }),
               std::runtime_error);
  EXPECT_EQ(buf.size(), 2u);
}

TEST(PeriodicLoop, RejectsNonPositivePeriod) {
  FakeClock clock;
  FakeUsage usage;
  TraceBuffer buf(1);
  EXPECT_THROW(canaries::run_periodic({0, 0, 1}, clock, usage, buf, [](std::uint64_t) {}, [] { return false; }),
               std::invalid_argument);
}
