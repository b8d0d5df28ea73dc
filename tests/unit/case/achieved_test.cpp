// Achieved reclaim across the write, the concurrent limit-reclaim estimate and the
// conservative figure (docs/PROTOCOL.md "Achieved reclaim"), with exact numbers.
#include <gtest/gtest.h>

#include "harness/case/control/reclaim_record.hpp"

using harness::case_::PgstealRate;
using harness::case_::ReclaimRecord;
using harness::case_::TelemetrySample;

namespace {
constexpr std::int64_t kMiB = 1 << 20;

/// A 96 MiB write lasting 2.2 s; pgsteal 100,000 -> 130,000 across it (117.2 MiB).
ReclaimRecord write_record() {
  ReclaimRecord r;
  r.requested_bytes = 96 * kMiB;
  r.start_ns = 30'000'000'000;
  r.end_ns = 32'200'000'000;
  r.pgsteal_before = 100'000;
  r.pgsteal_after = 130'000;
  r.pgsteal_settled = 131'000;
  r.counter = "pgsteal";
  r.counter_before = 100'000;
  r.counter_after = 130'000;
  // 6,000 pages of limit reclaim over the 3 s before the trigger.
  r.concurrent_rate = PgstealRate{6'000, 3'000'000'000, 3};
  return r;
}

TelemetrySample sample(std::int64_t t_ns, std::optional<std::int64_t> read_ns, std::optional<std::int64_t> pgsteal) {
  TelemetrySample s;
  s.t_ns = t_ns;
  s.read_ns = read_ns;
  s.bg_pgsteal = pgsteal;
  return s;
}
}  // namespace

TEST(Achieved, AcrossTheWriteMinusTheConcurrentEstimate) {
  auto r = write_record();
  EXPECT_EQ(r.duration_ns(), 2'200'000'000);
  // (130,000 - 100,000) x 4096
  EXPECT_EQ(*r.achieved_bytes(4096), 122'880'000);
  // 6,000 pages x 4096 B / 3 s x 2.2 s = 18,022,400 B
  EXPECT_EQ(*r.concurrent_estimate_bytes(4096), 18'022'400);
  // 122,880,000 - 18,022,400 = 104,857,600 = 100 MiB
  EXPECT_EQ(*r.achieved_conservative_bytes(4096), 100 * kMiB);
  // The v1 figure: (131,000 - 100,000) x 4096
  EXPECT_EQ(*r.achieved_settled_bytes(4096), 126'976'000);
  EXPECT_DOUBLE_EQ(*r.achieved_ratio(4096), 100.0 / 96.0);
  EXPECT_STREQ(r.outcome(4096), "ok");
  auto j = r.to_json(4096);
  EXPECT_EQ(j["achieved_counter"], "pgsteal");
  EXPECT_EQ(j["achieved_bytes"], 122'880'000);
  EXPECT_EQ(j["concurrent_estimate_bytes"], 18'022'400);
  EXPECT_EQ(j["achieved_conservative_bytes"], 104'857'600);
  EXPECT_EQ(j["achieved_settled_bytes"], 126'976'000);
  EXPECT_EQ(j["concurrent_rate"]["pages"], 6'000);
}

TEST(Achieved, EstimateFloorsAndClipsAtZero) {
  auto r = write_record();
  r.concurrent_rate = PgstealRate{1, 3'000'000'000, 3};  // 4096 x 2.2 / 3 = 3003.73 -> 3003
  EXPECT_EQ(*r.concurrent_estimate_bytes(4096), 3'003);
  r.concurrent_rate = PgstealRate{60'000, 3'000'000'000, 3};  // 180,224,000 B > achieved
  EXPECT_EQ(*r.concurrent_estimate_bytes(4096), 180'224'000);
  EXPECT_EQ(*r.achieved_conservative_bytes(4096), 0);
  EXPECT_STREQ(r.outcome(4096), "partial");
}

TEST(Achieved, ProactiveCounterHasNoConcurrentEstimate) {
  auto r = write_record();
  r.counter = "pgsteal_proactive";
  r.counter_before = 5'000;
  r.counter_after = 29'576;  // 24,576 pages = 96 MiB
  EXPECT_EQ(*r.achieved_bytes(4096), 96 * kMiB);
  EXPECT_EQ(*r.concurrent_estimate_bytes(4096), 0);
  EXPECT_EQ(*r.achieved_conservative_bytes(4096), 96 * kMiB);
  EXPECT_STREQ(r.outcome(4096), "ok");
}

TEST(Achieved, UnknownReadingsAreNullNotZero) {
  auto r = write_record();
  r.concurrent_rate.reset();
  EXPECT_EQ(*r.achieved_bytes(4096), 122'880'000);
  EXPECT_FALSE(r.concurrent_estimate_bytes(4096));
  EXPECT_FALSE(r.achieved_conservative_bytes(4096));
  EXPECT_TRUE(r.to_json(4096)["achieved_conservative_bytes"].is_null());
  r = write_record();
  r.counter_after.reset();
  EXPECT_FALSE(r.achieved_bytes(4096));
  EXPECT_FALSE(r.achieved_conservative_bytes(4096));
  EXPECT_THROW(r.concurrent_estimate_bytes(0), std::invalid_argument);
}

TEST(Achieved, RateOverTheLastThreeWindows) {
  // Five samples; the last three windows span samples 1..4 (read_ns 1.01 s .. 4.02 s).
  std::vector<TelemetrySample> s = {
      sample(0, 10'000'000, 1'000),           sample(1'000'000'000, 1'010'000'000, 2'000),
      sample(2'000'000'000, 2'000'000'000, 3'500), sample(3'000'000'000, 3'050'000'000, 5'000),
      sample(4'000'000'000, 4'020'000'000, 8'020)};
  auto r = harness::case_::pgsteal_rate_before(s, 3);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pages, 6'020);
  EXPECT_EQ(r->window_ns, 3'010'000'000);
  EXPECT_EQ(r->windows, 3);
  // read_ns missing: the tick time is used.
  s[1].read_ns.reset();
  EXPECT_EQ(harness::case_::pgsteal_rate_before(s, 3)->window_ns, 3'020'000'000);
  // Too few samples or a missing pgsteal: unknown.
  std::vector<TelemetrySample> three(s.begin() + 2, s.end());
  EXPECT_FALSE(harness::case_::pgsteal_rate_before(three, 3));
  s[1].bg_pgsteal.reset();
  EXPECT_FALSE(harness::case_::pgsteal_rate_before(s, 3));
}
