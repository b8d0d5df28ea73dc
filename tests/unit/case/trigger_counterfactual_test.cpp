// The window-length rule's cost (ours; trigger.hpp "Counterfactual"): how many windows
// were irregular and when the trigger would have fired without the rule, on the predicate
// alone and through the tick loop on an injected clock, where an overrun makes the window
// after it irregular (the case the rule exists for: a late tick under pressure).
#include <gtest/gtest.h>

#include <vector>

#include "harness/case/run/case_outcome.hpp"
#include "harness/case/control/controller.hpp"
#include "harness/case/run/tick_loop.hpp"
#include "harness/case/control/trigger.hpp"

using harness::case_::TriggerPredicate;

namespace {
constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kMs = 1'000'000;
}  // namespace

TEST(TriggerCounterfactual, AnIrregularCountingWindowDelaysTheFiringByThreeWindows) {
  TriggerPredicate p;  // 1000 ms, 1000 us, 3 windows
  EXPECT_FALSE(p.feed(0, 0, 0));
  p.feed(1 * kS, 1 * kS, 2'000);
  p.feed(2 * kS, 2 * kS, 4'000);
  // 2 s window with 10 ms of growth: irregular, resets; without the rule the third counting window.
  auto w = p.feed(3 * kS, 4 * kS, 14'000);
  ASSERT_TRUE(w);
  EXPECT_TRUE(w->irregular);
  EXPECT_TRUE(w->counting_without_length_rule);
  EXPECT_FALSE(w->fires);
  ASSERT_TRUE(p.earlier_without_length_rule_ns());
  EXPECT_EQ(*p.earlier_without_length_rule_ns(), 3 * kS);
  p.feed(4 * kS, 5 * kS, 16'000);
  p.feed(5 * kS, 6 * kS, 18'000);
  auto f = p.feed(6 * kS, 7 * kS, 20'000);
  ASSERT_TRUE(f && f->fires);
  EXPECT_EQ(*p.fired_at_ns(), 6 * kS);
  EXPECT_EQ(*p.earlier_without_length_rule_ns(), 3 * kS);
  EXPECT_EQ(p.windows(), 6);
  EXPECT_EQ(p.irregular_windows(), 1);
}

TEST(TriggerCounterfactual, RegularWindowsLeaveNoCounterfactual) {
  TriggerPredicate p;
  EXPECT_FALSE(p.feed(0, 0, 0));
  for (int i = 1; i <= 5; ++i) p.feed(i * kS, i * kS, i * 2'000);
  EXPECT_EQ(*p.fired_at_ns(), 3 * kS);
  EXPECT_FALSE(p.earlier_without_length_rule_ns());
  EXPECT_EQ(p.windows(), 5);
  EXPECT_EQ(p.irregular_windows(), 0);
}

TEST(TriggerCounterfactual, AnIrregularWindowBelowTheThresholdDelaysNothing) {
  TriggerPredicate p;
  EXPECT_FALSE(p.feed(0, 0, 0));
  p.feed(1 * kS, 1 * kS, 2'000);
  p.feed(2 * kS, 2 * kS, 4'000);
  // Irregular (0.5 s) and 999 us of growth: it would not have counted either.
  p.feed(3 * kS, 2'500 * kMs, 4'999);
  p.feed(4 * kS, 3'500 * kMs, 7'000);
  p.feed(5 * kS, 4'500 * kMs, 9'000);
  auto f = p.feed(6 * kS, 5'500 * kMs, 11'000);
  ASSERT_TRUE(f && f->fires);
  EXPECT_EQ(p.irregular_windows(), 1);
  EXPECT_FALSE(p.earlier_without_length_rule_ns());
}

TEST(TriggerCounterfactual, NeverFiringWithTheRuleButFiringWithout) {
  TriggerPredicate p;
  EXPECT_FALSE(p.feed(0, 0, 0));
  // Every second window is 2 s long: the run never reaches three with the rule.
  std::int64_t read = 0, total = 0;
  for (int i = 1; i <= 6; ++i) {
    read += (i % 2 == 0 ? 2 : 1) * kS;
    total += 5'000;
    p.feed(i * kS, read, total);
  }
  EXPECT_FALSE(p.fired());
  EXPECT_EQ(p.irregular_windows(), 3);
  ASSERT_TRUE(p.earlier_without_length_rule_ns());
  EXPECT_EQ(*p.earlier_without_length_rule_ns(), 3 * kS);
  const auto o = harness::case_::trigger_outcome(p, true, 0);
  EXPECT_FALSE(o.fired);
  EXPECT_EQ(o.irregular_windows, 3);
  EXPECT_EQ(o.windows, 6);
  EXPECT_EQ(*o.earlier_without_length_rule_t_ns, 3 * kS);
}

TEST(TriggerCounterfactual, AReadFailureResetsBothRuns) {
  TriggerPredicate p;
  EXPECT_FALSE(p.feed(0, 0, 0));
  p.feed(1 * kS, 1 * kS, 2'000);
  p.feed(2 * kS, 4 * kS, 4'000);  // irregular
  p.reset_baseline();            // unreadable PSI at 3 s
  EXPECT_FALSE(p.feed(4 * kS, 5 * kS, 6'000));
  p.feed(5 * kS, 6 * kS, 8'000);
  p.feed(6 * kS, 7 * kS, 10'000);
  EXPECT_FALSE(p.earlier_without_length_rule_ns());  // 2 counting windows then the reset
  auto f = p.feed(7 * kS, 8 * kS, 12'000);
  ASSERT_TRUE(f && f->fires);
  EXPECT_FALSE(p.earlier_without_length_rule_ns());
}

namespace {
/// Jumps to each sleep's target; the driver advances `now` by the tick's work.
class InjectedClock : public harness::case_::TickClock {
 public:
  std::int64_t now = 0;
  std::int64_t now_ns() override { return now; }
  bool sleep_until(std::int64_t t) override {
    now = std::max(now, t);
    return true;
  }
};
}  // namespace

TEST(TriggerCounterfactual, AnOverrunTickInTheLoopMakesTheNextWindowIrregularAndIsRecorded) {
  harness::case_::CaseClock clk;
  clk.origin_ns = 100 * kS;
  clk.pressure_start_ns = clk.origin_ns + 2 * kS;
  clk.pressure_end_ns = clk.pressure_start_ns + 10 * kS;
  clk.end_ns = clk.pressure_end_ns + 1 * kS;
  clk.period_ns = kS;
  clk.tick_offset_ns = 25 * kMs;
  InjectedClock ic;
  std::vector<harness::case_::ControllerEvent> events;
  int actions = 0;
  harness::case_::Controller ctl({}, clk.pressure_start_ns, clk.pressure_end_ns,
                        [&](std::int64_t, std::vector<harness::case_::ControllerEvent>&) { ++actions; });
  std::int64_t total = 0;
  const std::int64_t overrun_k = 4;  // the tick after pressure's second window: 1.5 s of work
  const auto r = harness::case_::run_ticks(clk, ic, [&](const harness::case_::Tick& t) {
    harness::case_::TelemetrySample s;
    s.t_ns = t.t_ns;
    s.phase = t.phase;
    ic.now += 2 * kMs;  // the read itself
    s.read_ns = ic.now;
    if (t.t_ns > clk.pressure_start_ns) total += 3'000;  // 3 ms of bg stall per second of pressure
    s.bg_some_us = total;
    ctl.on_sample(s, events);
    ic.now += t.k == overrun_k ? 1'500 * kMs : 10 * kMs;
    return harness::case_::TickVerdict::Continue;
  });
  EXPECT_EQ(r.missed_total, 1);  // tick 5 was skipped
  const auto& p = ctl.predicate();
  // Windows close at ticks 3, 4, 6 (2 s, irregular), 7, 8, 9 -> fires at tick 9; without
  // the rule the window at tick 6 is the third counting one.
  EXPECT_EQ(p.irregular_windows(), 1);
  ASSERT_TRUE(p.fired());
  EXPECT_EQ(*p.fired_at_ns(), clk.tick(9));
  ASSERT_TRUE(p.earlier_without_length_rule_ns());
  EXPECT_EQ(*p.earlier_without_length_rule_ns(), clk.tick(6));
  EXPECT_EQ(actions, 1);
  const auto o = harness::case_::trigger_outcome(p, true, clk.pressure_start_ns);
  harness::case_::CaseOutcome co;
  co.trigger = o;
  const auto j = harness::case_::outcome_json(co);
  EXPECT_EQ(j["trigger"]["irregular_windows"], 1);
  EXPECT_EQ(j["trigger"]["earlier_without_length_rule_t_ns"], clk.tick(6));
  EXPECT_EQ(j["trigger"]["t_ns"], clk.tick(9));
  EXPECT_EQ(j["trigger"]["windows"], 8);  // every pressure window: ticks 3, 4, 6..11 (judging goes on after firing)
}
