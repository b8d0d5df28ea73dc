// Window-length rule of the trigger (SPEC.md "Version 2 additions"): a window is judged by
// its real length read_ns - previous read_ns; outside [0.9, 1.1] x 1 s it is irregular,
// never counts, and resets the run of consecutive windows.
#include <gtest/gtest.h>

#include "harness/case/control/controller.hpp"
#include "harness/case/control/trigger.hpp"

using harness::case_::TriggerPredicate;

namespace {
constexpr std::int64_t kS = 1'000'000'000;
}

TEST(WindowLength, TwoSecondWindowIsIrregularAndResetsTheRun) {
  TriggerPredicate p;  // 1000 ms, 1000 us, 3 windows
  EXPECT_FALSE(p.feed(0, 0, 0));
  auto a = p.feed(1 * kS, 1 * kS, 5'000);
  auto b = p.feed(2 * kS, 2 * kS, 10'000);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->consecutive, 1);
  EXPECT_EQ(b->consecutive, 2);
  // The loop slept through a tick: the next read is 2 s later. 50 ms of growth, but the
  // window is not judged: no third counting window, no firing.
  auto c = p.feed(3 * kS, 4 * kS, 60'000);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->length_ns, 2 * kS);
  EXPECT_TRUE(c->irregular);
  EXPECT_FALSE(c->counting);
  EXPECT_EQ(c->consecutive, 0);
  EXPECT_FALSE(c->fires);
  EXPECT_EQ(c->delta_us, 50'000);
  // The run restarts from the irregular window's read.
  auto d = p.feed(4 * kS, 5 * kS, 62'000);
  auto e = p.feed(5 * kS, 6 * kS, 64'000);
  auto f = p.feed(6 * kS, 7 * kS, 66'000);
  EXPECT_EQ(d->consecutive, 1);
  EXPECT_EQ(e->consecutive, 2);
  EXPECT_EQ(f->consecutive, 3);
  EXPECT_TRUE(f->fires);
  EXPECT_EQ(*p.fired_at_ns(), 6 * kS);
}

TEST(WindowLength, NinetyFiveHundredthsOfASecondCounts) {
  TriggerPredicate p;
  EXPECT_FALSE(p.feed(0, 10'000'000, 0));
  // Tick at 1 s, read at 0.96 s: 0.95 s window.
  auto w = p.feed(kS, 960'000'000, 1'000);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->length_ns, 950'000'000);
  EXPECT_FALSE(w->irregular);
  EXPECT_TRUE(w->counting);
  EXPECT_EQ(w->consecutive, 1);
}

TEST(WindowLength, BoundsAreInclusiveToTheNanosecond) {
  TriggerPredicate p;
  EXPECT_FALSE(p.irregular_length(900'000'000));
  EXPECT_TRUE(p.irregular_length(899'999'999));
  EXPECT_FALSE(p.irregular_length(1'100'000'000));
  EXPECT_TRUE(p.irregular_length(1'100'000'001));
  EXPECT_FALSE(p.irregular_length(kS));
  EXPECT_TRUE(p.irregular_length(0));
  TriggerPredicate q({500, 1000, 3});  // 500 ms windows: [450, 550] ms
  EXPECT_FALSE(q.irregular_length(450'000'000));
  EXPECT_TRUE(q.irregular_length(449'999'999));
  EXPECT_TRUE(q.irregular_length(kS));
}

TEST(WindowLength, ExactConsecutiveValuesAcrossMixedWindows) {
  TriggerPredicate p;
  // read times (ns) and totals (us); windows: 1.0 ok, 1.05 ok, 0.5 irregular, 1.0 ok,
  // 1.0 below threshold (999 us), 1.1 ok, 1.0 ok, 1.0 ok -> fires on the last.
  const std::int64_t reads[] = {0, 1'000'000'000, 2'050'000'000, 2'550'000'000, 3'550'000'000,
                                4'550'000'000, 5'650'000'000, 6'650'000'000, 7'650'000'000};
  const std::int64_t totals[] = {0, 2'000, 4'000, 9'000, 11'000, 11'999, 14'000, 16'000, 18'000};
  const int consecutive[] = {1, 2, 0, 1, 0, 1, 2, 3};
  const bool irregular[] = {false, false, true, false, false, false, false, false};
  EXPECT_FALSE(p.feed(reads[0], reads[0], totals[0]));
  for (int i = 1; i < 9; ++i) {
    auto w = p.feed(reads[i], reads[i], totals[i]);
    ASSERT_TRUE(w) << i;
    EXPECT_EQ(w->consecutive, consecutive[i - 1]) << "window " << i;
    EXPECT_EQ(w->irregular, irregular[i - 1]) << "window " << i;
    EXPECT_EQ(w->length_ns, reads[i] - reads[i - 1]);
    EXPECT_EQ(w->fires, i == 8) << "window " << i;
  }
}

TEST(WindowLength, ControllerRecordsWindowNsAndIrregular) {
  std::vector<harness::case_::ControllerEvent> ev;
  int actions = 0;
  harness::case_::Controller c({}, 0, 100 * kS,
                      [&](std::int64_t, std::vector<harness::case_::ControllerEvent>&) { ++actions; });
  const std::int64_t reads[] = {25'000'000, 1'030'000'000, 3'025'000'000, 4'020'000'000};
  for (int i = 0; i < 4; ++i) {
    harness::case_::TelemetrySample s;
    s.t_ns = 25'000'000 + i * kS;  // ticks; the third read was late by one period
    s.phase = "pressure";
    s.read_ns = reads[i];
    s.bg_some_us = 10'000 * i;
    c.on_sample(s, ev);
  }
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(*ev[0].window_ns, 1'005'000'000);
  EXPECT_EQ(*ev[0].irregular, 0);
  EXPECT_EQ(*ev[0].counting, 1);
  EXPECT_EQ(*ev[1].window_ns, 1'995'000'000);
  EXPECT_EQ(*ev[1].irregular, 1);
  EXPECT_EQ(*ev[1].counting, 0);
  EXPECT_EQ(*ev[1].consecutive, 0);
  EXPECT_EQ(*ev[2].window_ns, 995'000'000);
  EXPECT_EQ(*ev[2].irregular, 0);
  EXPECT_EQ(*ev[2].consecutive, 1);
  EXPECT_EQ(actions, 0);
}
