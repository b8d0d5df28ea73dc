// Reclaim action record arithmetic (study: achieved = pgsteal delta x page size).
#include <gtest/gtest.h>

#include <cerrno>

#include "harness/case/control/reclaim_record.hpp"

using harness::case_::ReclaimRecord;

namespace {
// Numbers in the shape of tests/fixtures/6.1.0-57-cloud-amd64/reclaim-notes.txt (96M written
// to bg memory.reclaim under TCG: rc=0 after 2.2 s).
ReclaimRecord sample() {
  ReclaimRecord r;
  r.requested_bytes = 96ll << 20;
  r.start_ns = 25'180'000'000;
  r.end_ns = 27'380'000'000;
  r.write_errno = 0;
  r.pgsteal_before = 100'000;
  r.pgsteal_after = 110'000;
  r.pgsteal_settled = 141'000;  // +41000 pages = 160.2 MiB (limit reclaim included)
  r.pgscan_before = 150'000;
  r.pgscan_after = 165'000;
  r.pgscan_settled = 200'000;
  r.bg_current_before_bytes = 209'715'200;
  r.bg_current_after_bytes = 110'100'480;
  r.counter = "pgsteal";
  r.counter_before = 100'000;
  r.counter_after = 125'000;  // +25000 pages across the write = 97.7 MiB
  r.concurrent_rate = harness::case_::PgstealRate{0, 3'000'000'000, 3};  // no limit reclaim before
  return r;
}
}  // namespace

TEST(ReclaimRecord, AchievedIsTheCounterDeltaAcrossTheWrite) {
  auto r = sample();
  EXPECT_EQ(r.duration_ns(), 2'200'000'000);
  ASSERT_TRUE(r.achieved_bytes(4096));
  EXPECT_EQ(*r.achieved_bytes(4096), 25'000ll * 4096);
  EXPECT_EQ(*r.achieved_settled_bytes(4096), 41'000ll * 4096);  // v1 figure, limit reclaim included
  EXPECT_NEAR(*r.achieved_ratio(4096), 25'000.0 * 4096 / (96 << 20), 1e-12);
  EXPECT_EQ(*r.current_drop_bytes(), 209'715'200 - 110'100'480);
  EXPECT_STREQ(r.outcome(4096), "ok");
  // Another page size scales linearly.
  EXPECT_EQ(*r.achieved_bytes(16384), 25'000ll * 16384);
  EXPECT_THROW(r.achieved_bytes(0), std::invalid_argument);
}

TEST(ReclaimRecord, MissingReadingIsNullNotZero) {
  auto r = sample();
  r.counter_after.reset();
  EXPECT_FALSE(r.achieved_bytes(4096));
  EXPECT_FALSE(r.achieved_ratio(4096));
  r = sample();
  r.bg_current_after_bytes.reset();
  EXPECT_FALSE(r.current_drop_bytes());
  auto j = r.to_json(4096);
  EXPECT_TRUE(j["current_drop_bytes"].is_null());
  EXPECT_TRUE(j["bg_current_after_bytes"].is_null());
}

TEST(ReclaimRecord, PartialAndErrorOutcomes) {
  auto r = sample();
  r.write_errno = EAGAIN;
  EXPECT_STREQ(r.outcome(4096), "partial");
  r.write_errno = EINTR;
  EXPECT_STREQ(r.outcome(4096), "error");
  r = sample();
  r.counter_after = *r.counter_before + 100;  // 400 KiB of a 96 MiB request
  EXPECT_STREQ(r.outcome(4096), "partial");
  EXPECT_EQ(*r.achieved_bytes(4096), 409'600);
}

TEST(ReclaimRecord, JsonCarriesEveryField) {
  auto j = sample().to_json(4096);
  EXPECT_EQ(j["requested_bytes"], 96ll << 20);
  EXPECT_EQ(j["duration_ns"], 2'200'000'000);
  EXPECT_EQ(j["write_errno"], 0);
  EXPECT_EQ(j["pgsteal_before"], 100'000);
  EXPECT_EQ(j["pgsteal_after"], 110'000);
  EXPECT_EQ(j["pgsteal_settled"], 141'000);
  EXPECT_EQ(j["pgscan_settled"], 200'000);
  EXPECT_EQ(j["achieved_bytes"], 25'000ll * 4096);
  EXPECT_EQ(j["achieved_settled_bytes"], 41'000ll * 4096);
  EXPECT_EQ(j["outcome"], "ok");
}
