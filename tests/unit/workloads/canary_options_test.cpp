// Canary run flags -> schedule, and errors that name the flag.
#include "canaries/canary_runner.hpp"

#include <gtest/gtest.h>

namespace {
std::string error_of(const canaries::CanaryOptions& o, std::int64_t now) {
  try {
    canaries::make_schedule(o, now);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "<no error>";
}
canaries::CanaryOptions base() {
  canaries::CanaryOptions o;
  o.duration_s = 1.05;
  o.trace_path = "/tmp/x.trace";
  return o;
}
}  // namespace

TEST(CanarySchedule, DefaultsAndCounts) {
  const std::int64_t now = 7'000'000'000;
  auto s = canaries::make_schedule(base(), now);
  EXPECT_EQ(s.period_ns, 100'000'000);
  EXPECT_EQ(s.origin_ns, now + 100'000'000);  // default start: now + one period
  EXPECT_EQ(s.requests, 11u);                  // starts in [T, T + 1.05 s): ceil(10.5)
  auto o = base();
  o.duration_s = 300;
  o.start_at_ns = now + 2'000'000'000;
  s = canaries::make_schedule(o, now);
  EXPECT_EQ(s.origin_ns, now + 2'000'000'000);
  EXPECT_EQ(s.requests, 3000u);
  EXPECT_EQ(s.start_ns(2999), now + 2'000'000'000 + 2999LL * 100'000'000);
}

TEST(CanarySchedule, BadFlagsAreNamed) {
  auto o = base();
  o.period_ms = 0;
  EXPECT_NE(error_of(o, 0).find("--period-ms"), std::string::npos);
  o = base();
  o.duration_s = -1;
  EXPECT_NE(error_of(o, 0).find("--duration-s"), std::string::npos);
  o = base();
  o.duration_s = 0.05;  // shorter than one period
  EXPECT_NE(error_of(o, 0).find("--duration-s"), std::string::npos);
  o = base();
  o.trace_path.clear();
  EXPECT_NE(error_of(o, 0).find("--trace"), std::string::npos);
  o = base();
  o.start_at_ns = 1'000;
  EXPECT_NE(error_of(o, 60'000'000'000).find("--start-at-ns"), std::string::npos);
  o.start_at_ns = 55'000'000'000;  // 5 s in the past: accepted, first requests run late
  EXPECT_EQ(error_of(o, 60'000'000'000), "<no error>");
}

TEST(CanarySchedule, CliParsesContractFlags) {
  CLI::App app;
  canaries::CanaryOptions o;
  canaries::add_run_options(app, o);
  app.parse("--period-ms 50 --duration-s 2 --trace /tmp/t --start-at-ns 123456789 --seed 9", false);
  EXPECT_EQ(o.period_ms, 50);
  EXPECT_DOUBLE_EQ(o.duration_s, 2.0);
  EXPECT_EQ(o.trace_path, "/tmp/t");
  ASSERT_TRUE(o.start_at_ns.has_value());
  EXPECT_EQ(*o.start_at_ns, 123456789);
  EXPECT_EQ(o.seed, 9u);
  CLI::App app2;
  canaries::CanaryOptions o2;
  canaries::add_run_options(app2, o2);
  try {
    app2.parse("--period-ms abc --duration-s 1 --trace t", false);
    FAIL() << "no error";
  } catch (const CLI::ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("--period-ms"), std::string::npos) << e.what();
  }
}
