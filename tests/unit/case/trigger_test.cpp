// The study's PSI trigger predicate on bg memory.pressure sequences recorded in a real
// guest (tests/unit/case/fixtures/6.1.0-57-cloud-amd64/psi-sequence: one read ~1 s apart;
// 7 idle ticks, a 300 MiB touch loop under memory.max=200M with zram, then idle again;
// captured by fixtures/capture/capture-case.sh). Files are parsed by harness::kernel::parse_psi.
#include <gtest/gtest.h>

#include "tests/common/fixture_file.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "harness/case/control/trigger.hpp"
#include "harness/kernel/psi.hpp"

using harness::case_::TriggerPredicate;
using harness::case_::TriggerSpec;
using harness::case_::TriggerWindow;

namespace {
const std::string kSeq = "tests/unit/case/fixtures/6.1.0-57-cloud-amd64/psi-sequence/";

struct Sample {
  std::int64_t t_ns;
  std::int64_t some_us;
  std::int64_t uptime_ns = 0;  ///< when the capture read it (reads drifted 1.03-1.30 s apart)
};

using test_support::fixture_text;

/// The 32 recorded ticks: (tick, some total us, uptime as ns). Ticks are an exact 1 s grid
/// from the first read (the executor's ticks; the capture's own reads drifted and would be
/// irregular windows under the v2 window-length rule, see WindowLengthOfTheCapture).
std::vector<Sample> recorded() {
  std::vector<Sample> out;
  for (int i = 0; i < 32; ++i) {
    auto base = kSeq + fmt::format("{:03d}", i);
    double up = std::stod(fixture_text(base + ".uptime"));
    auto psi = harness::kernel::parse_psi(fixture_text(base + ".memory.pressure"), base + ".memory.pressure");
    const std::int64_t up_ns = static_cast<std::int64_t>(std::llround(up * 1e9));
    const std::int64_t t0 = out.empty() ? up_ns : out.front().t_ns;
    out.push_back({t0 + i * 1'000'000'000ll, static_cast<std::int64_t>(psi.some_total_us()), up_ns});
  }
  return out;
}

std::vector<TriggerWindow> feed_all(TriggerPredicate& p, const std::vector<Sample>& s) {
  std::vector<TriggerWindow> w;
  for (const auto& x : s)
    if (auto r = p.feed(x.t_ns, x.some_us)) w.push_back(*r);
  return w;
}
}  // namespace

TEST(TriggerPredicate, RecordedSequenceIsWhatWeThinkItIs) {
  auto s = recorded();
  ASSERT_EQ(s.size(), 32u);
  for (int i = 1; i <= 6; ++i) EXPECT_EQ(s[i].some_us, 0) << i;  // idle before the touch loop
  for (int i = 7; i <= 23; ++i) EXPECT_GE(s[i].some_us - s[i - 1].some_us, 1000) << i;
  for (int i = 24; i < 32; ++i) EXPECT_EQ(s[i].some_us, s[23].some_us) << i;  // idle after
}

TEST(TriggerPredicate, FiresAtTheThirdCountingWindowOfTheRecordedEpisode) {
  auto s = recorded();
  TriggerPredicate p;  // study defaults: 1000 us, 3 windows
  auto w = feed_all(p, s);
  ASSERT_EQ(w.size(), 31u);  // first sample is the baseline
  for (int i = 0; i < 6; ++i) {
    EXPECT_FALSE(w[i].counting) << i;
    EXPECT_EQ(w[i].consecutive, 0);
    EXPECT_FALSE(w[i].fires);
  }
  EXPECT_TRUE(w[6].counting);
  EXPECT_EQ(w[6].consecutive, 1);
  EXPECT_EQ(w[6].delta_us, 532716);
  EXPECT_FALSE(w[6].fires);
  EXPECT_EQ(w[7].consecutive, 2);
  EXPECT_FALSE(w[7].fires);
  EXPECT_EQ(w[8].consecutive, 3);
  EXPECT_TRUE(w[8].fires);
  ASSERT_TRUE(p.fired_at_ns());
  EXPECT_EQ(*p.fired_at_ns(), s[9].t_ns);  // the tick read at uptime 12.80 s
  EXPECT_EQ(w[8].length_ns, s[9].t_ns - s[8].t_ns);
}

TEST(TriggerPredicate, FiresOnceAndNonCountingWindowsReset) {
  auto s = recorded();
  TriggerPredicate p;
  auto w = feed_all(p, s);
  int fires = 0;
  for (const auto& x : w) fires += x.fires;
  EXPECT_EQ(fires, 1);  // 17 counting windows in a row, one firing
  EXPECT_EQ(w[22].consecutive, 17);
  // After the loop stopped the total is flat: the run resets to 0 and stays there.
  for (std::size_t i = 23; i < w.size(); ++i) {
    EXPECT_FALSE(w[i].counting) << i;
    EXPECT_EQ(w[i].consecutive, 0) << i;
    EXPECT_FALSE(w[i].fires);
  }
}

TEST(TriggerPredicate, ANonCountingWindowResetsTheRun) {
  // Recorded deltas: two counting windows (ticks 7, 8), then the flat window recorded
  // after the loop ended (tick 24 -> 25), then the rest of the recorded pressure.
  auto s = recorded();
  std::vector<Sample> seq{s[6], s[7], s[8]};
  std::int64_t t = s[8].t_ns, total = s[8].some_us;
  auto push_delta = [&](std::int64_t dt, std::int64_t dus) {
    t += dt;
    total += dus;
    seq.push_back({t, total});
  };
  push_delta(s[25].t_ns - s[24].t_ns, s[25].some_us - s[24].some_us);  // flat: 0 us
  for (int i = 9; i <= 12; ++i) push_delta(s[i].t_ns - s[i - 1].t_ns, s[i].some_us - s[i - 1].some_us);
  TriggerPredicate p;
  auto w = feed_all(p, seq);
  ASSERT_EQ(w.size(), 7u);
  EXPECT_EQ(w[0].consecutive, 1);
  EXPECT_EQ(w[1].consecutive, 2);
  EXPECT_FALSE(w[2].counting);
  EXPECT_EQ(w[2].delta_us, 0);
  EXPECT_EQ(w[2].consecutive, 0);
  EXPECT_EQ(w[3].consecutive, 1);
  EXPECT_EQ(w[4].consecutive, 2);
  EXPECT_FALSE(w[4].fires);
  EXPECT_TRUE(w[5].fires);  // third counting window after the reset
  EXPECT_FALSE(w[6].fires);
}

TEST(TriggerPredicate, NineHundredNinetyNineMicrosecondsDoNotCount) {
  auto s = recorded();
  const std::int64_t base = s[24].some_us;  // a real total, flat afterwards
  TriggerPredicate p;
  std::int64_t t = s[24].t_ns, total = base;
  EXPECT_FALSE(p.feed(t, total));
  for (int i = 0; i < 10; ++i) {
    t += 1'000'000'000;
    total += 999;
    auto w = p.feed(t, total);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->delta_us, 999);
    EXPECT_FALSE(w->counting);
    EXPECT_FALSE(w->fires);
  }
  EXPECT_FALSE(p.fired());
  // Exactly the threshold counts (>= 1000 us).
  for (int i = 1; i <= 3; ++i) {
    t += 1'000'000'000;
    total += 1000;
    auto w = p.feed(t, total);
    EXPECT_TRUE(w->counting);
    EXPECT_EQ(w->consecutive, i);
    EXPECT_EQ(w->fires, i == 3);
  }
}

TEST(TriggerPredicate, AnUnmeasuredTickResetsAndRebaselines) {
  auto s = recorded();
  TriggerPredicate p;
  for (int i = 6; i <= 8; ++i) p.feed(s[i].t_ns, s[i].some_us);  // 2 counting windows
  p.reset_baseline();                                            // PSI read failed at tick 9
  EXPECT_FALSE(p.feed(s[10].t_ns, s[10].some_us));               // baseline only
  auto a = p.feed(s[11].t_ns, s[11].some_us);
  auto b = p.feed(s[12].t_ns, s[12].some_us);
  auto c = p.feed(s[13].t_ns, s[13].some_us);
  EXPECT_EQ(a->consecutive, 1);
  EXPECT_FALSE(b->fires);
  EXPECT_TRUE(c->fires);
}

TEST(TriggerPredicate, ThresholdsComeFromTheSpec) {
  auto s = recorded();
  TriggerPredicate p(TriggerSpec{1000, 700'000, 2});  // 0.7 s per window, 2 windows
  auto w = feed_all(p, s);
  // Recorded deltas: 532716, 606146, 625027, 720126, 755280, 721811 ...
  EXPECT_FALSE(w[6].counting);
  EXPECT_FALSE(w[8].counting);
  EXPECT_TRUE(w[9].counting);
  EXPECT_TRUE(w[10].counting);
  EXPECT_TRUE(w[10].fires);
  EXPECT_THROW(TriggerPredicate(TriggerSpec{1000, 0, 3}), std::invalid_argument);
  EXPECT_THROW(p.feed(0, 0), std::invalid_argument);  // time went backwards
}

TEST(TriggerPredicate, WindowLengthOfTheCapture) {
  // Fed with the capture's real read times, windows longer than 1.1 s are irregular:
  // 12.80 -> 13.93 s (1.13 s) and 13.93 -> 15.14 s (1.21 s); 8.44 -> 9.54 s is exactly
  // 1.10 s and still judged (inclusive bound).
  auto s = recorded();
  TriggerPredicate p;
  std::vector<TriggerWindow> w;
  for (const auto& x : s)
    if (auto r = p.feed(x.uptime_ns, x.uptime_ns, x.some_us)) w.push_back(*r);
  ASSERT_EQ(w.size(), 31u);
  EXPECT_EQ(w[5].length_ns, 1'100'000'000);
  EXPECT_FALSE(w[5].irregular);
  EXPECT_EQ(w[9].length_ns, 1'130'000'000);
  EXPECT_TRUE(w[9].irregular);
  EXPECT_FALSE(w[9].counting);
  EXPECT_EQ(w[9].consecutive, 0);
  EXPECT_EQ(w[10].length_ns, 1'210'000'000);
  EXPECT_TRUE(w[10].irregular);
  int irregular = 0;
  for (const auto& x : w) irregular += x.irregular;
  EXPECT_GE(irregular, 2);
}
