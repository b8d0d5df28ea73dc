// Clean timing (SPEC.md "Version 2 additions"): the SQLite canary's origin is T0 + 50 ms,
// telemetry/controller ticks are at T0 + 25 ms + k x period; the canaries get those
// origins on their command lines.
#include <gtest/gtest.h>

#include "tests/common/valid_spec.hpp"

#include <algorithm>

#include "harness/case/run/case_clock.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/case/spec/workloads.hpp"

namespace {
std::string after(const std::vector<std::string>& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  if (it == argv.end() || it + 1 == argv.end()) return "<missing>";
  return *(it + 1);
}
harness::case_::CaseSpec study() { return harness::case_::load_spec_file("tests/unit/case/fixtures/spec-study.json"); }
}  // namespace

TEST(CaseClock, DefaultsAreFiftyAndTwentyFiveMilliseconds) {
  auto spec = study();
  EXPECT_EQ(spec.canaries.sqlite_offset_ms, 50);
  EXPECT_EQ(spec.telemetry_offset_ms, 25);
  const std::int64_t t0 = 7'000'000'123;
  auto c = harness::case_::CaseClock::from(spec, t0);
  EXPECT_EQ(c.sqlite_origin_ns() - c.compute_origin_ns(), 50'000'000);
  EXPECT_EQ(c.compute_origin_ns(), t0);
  EXPECT_EQ(c.tick(0), t0 + 25'000'000);
  EXPECT_EQ(c.tick(7), t0 + 25'000'000 + 7'000'000'000);
  EXPECT_EQ(c.pressure_start_ns, t0 + 120'000'000'000);
  EXPECT_EQ(c.pressure_end_ns, t0 + 420'000'000'000);
  EXPECT_EQ(c.end_ns, t0 + 540'000'000'000);
  // The sample opening the pressure phase: the first tick at or after its start.
  EXPECT_EQ(c.first_tick_at_or_after(c.pressure_start_ns), 120);
  EXPECT_EQ(c.tick(120), c.pressure_start_ns + 25'000'000);
  EXPECT_STREQ(c.phase_of(c.tick(119)), "warmup");
  EXPECT_STREQ(c.phase_of(c.tick(120)), "pressure");
  EXPECT_STREQ(c.phase_of(c.tick(419)), "pressure");
  EXPECT_STREQ(c.phase_of(c.tick(420)), "recovery");
  EXPECT_EQ(c.first_tick_at_or_after(0), 0);
  EXPECT_EQ(c.first_tick_at_or_after(c.tick(3)), 3);
  EXPECT_EQ(c.first_tick_at_or_after(c.tick(3) + 1), 4);
}

TEST(CaseClock, CanaryArgvCarryTheOffsetOrigins) {
  auto spec = study();
  const std::int64_t t0 = 123'456'789;
  auto c = harness::case_::CaseClock::from(spec, t0);
  harness::case_::Workloads w(spec, "/b", "/w");
  auto cc = w.canary_compute(c.compute_origin_ns(), 540);
  auto cs = w.canary_sqlite(c.sqlite_origin_ns(), 540);
  EXPECT_EQ(after(cc, "--start-at-ns"), "123456789");
  EXPECT_EQ(after(cs, "--start-at-ns"), "173456789");
  EXPECT_EQ(std::stoll(after(cs, "--start-at-ns")) - std::stoll(after(cc, "--start-at-ns")), 50'000'000);
  // No wake-up shared by the canaries (every 100 ms at +0 / +50 ms) and the ticks (+25 ms).
  for (std::int64_t k = 0; k < 10; ++k) {
    const std::int64_t tick_mod = (c.tick(k) - t0) % 100'000'000;
    EXPECT_EQ(tick_mod, 25'000'000);
  }
}

TEST(CaseClock, ExplicitOffsetsAndTheirBounds) {
  // The SPEC.md example with short phases and the offsets under test ("" = absent).
  auto spec_text = [](const std::string& sqlite_off, const std::string& tel_off) {
    nlohmann::json j = test_support::valid_spec("c", "x", 1, 2, 1);
    if (!sqlite_off.empty()) j["canaries"]["sqlite_offset_ms"] = std::stoll(sqlite_off);
    if (!tel_off.empty()) j["telemetry_offset_ms"] = std::stoll(tel_off);
    return j.dump();
  };
  auto s = harness::case_::parse_spec(spec_text("30", "10"), "t");
  EXPECT_EQ(s.canaries.sqlite_offset_ms, 30);
  EXPECT_EQ(s.telemetry_offset_ms, 10);
  auto c = harness::case_::CaseClock::from(s, 0);
  EXPECT_EQ(c.sqlite_origin_ns(), 30'000'000);
  EXPECT_EQ(c.tick(2), 2'010'000'000);
  try {
    harness::case_::parse_spec(spec_text("100", ""), "t");
    ADD_FAILURE() << "sqlite_offset_ms = period accepted";
  } catch (const harness::case_::SpecError& e) {
    EXPECT_EQ(e.field(), "canaries.sqlite_offset_ms");
  }
  try {
    harness::case_::parse_spec(spec_text("", "1000"), "t");
    ADD_FAILURE() << "telemetry_offset_ms = period accepted";
  } catch (const harness::case_::SpecError& e) {
    EXPECT_EQ(e.field(), "telemetry_offset_ms");
  }
  try {
    harness::case_::parse_spec(spec_text("-1", ""), "t");
    ADD_FAILURE() << "negative offset accepted";
  } catch (const harness::case_::SpecError& e) {
    EXPECT_EQ(e.field(), "canaries.sqlite_offset_ms");
  }
}
