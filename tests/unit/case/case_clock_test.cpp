// Clean timing (SPEC.md "Version 2 additions"): the SQLite canary's origin is T0 + 50 ms,
// telemetry/controller ticks are at T0 + 25 ms + k x period; the canaries get those
// origins on their command lines.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/case/case_clock.hpp"
#include "harness/case/spec.hpp"
#include "harness/case/workloads.hpp"

namespace {
std::string after(const std::vector<std::string>& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  if (it == argv.end() || it + 1 == argv.end()) return "<missing>";
  return *(it + 1);
}
hcase::CaseSpec study() { return hcase::load_spec_file("tests/unit/case/fixtures/spec-study.json"); }
}  // namespace

TEST(CaseClock, DefaultsAreFiftyAndTwentyFiveMilliseconds) {
  auto spec = study();
  EXPECT_EQ(spec.canaries.sqlite_offset_ms, 50);
  EXPECT_EQ(spec.telemetry_offset_ms, 25);
  const std::int64_t t0 = 7'000'000'123;
  auto c = hcase::CaseClock::from(spec, t0);
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
  auto c = hcase::CaseClock::from(spec, t0);
  hcase::Workloads w(spec, "/b", "/w");
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
  auto spec_text = [](const std::string& sqlite_off, const std::string& tel_off) {
    std::string s = R"({"case_id":"c","campaign":"x","vm":"vm0","regime":"r","repeat":1,
      "configuration":"static-zram","pinned_commit":"any","vm_shape":{"vcpus":1,"memory_mib":1024},
      "phases_s":{"warmup":1,"pressure":2,"recovery":1},
      "cgroups":{"parent":"harness","bg_memory_max_bytes":314572800},
      "backend":{"zram_disksize_bytes":536870912,"zram_algorithm":"lzo-rle","zram_priority":100,
                 "swapfile_path":"/s","swapfile_priority":10},
      "pressure":{"allocation_bytes":629145600,"rate_mib_s":16,"active_set_bytes":134217728,
                  "contents":"structured","seed":1},
      "canaries":{"period_ms":100,"compute_hot_bytes":16777216,"sqlite_db_path":"/d",
                  "sqlite_queries_per_request":8,"seed":1)";
    if (!sqlite_off.empty()) s += ",\"sqlite_offset_ms\":" + sqlite_off;
    s += "}";
    if (!tel_off.empty()) s += ",\"telemetry_offset_ms\":" + tel_off;
    return s + "}";
  };
  auto s = hcase::parse_spec(spec_text("30", "10"), "t");
  EXPECT_EQ(s.canaries.sqlite_offset_ms, 30);
  EXPECT_EQ(s.telemetry_offset_ms, 10);
  auto c = hcase::CaseClock::from(s, 0);
  EXPECT_EQ(c.sqlite_origin_ns(), 30'000'000);
  EXPECT_EQ(c.tick(2), 2'010'000'000);
  try {
    hcase::parse_spec(spec_text("100", ""), "t");
    ADD_FAILURE() << "sqlite_offset_ms = period accepted";
  } catch (const hcase::SpecError& e) {
    EXPECT_EQ(e.field(), "canaries.sqlite_offset_ms");
  }
  try {
    hcase::parse_spec(spec_text("", "1000"), "t");
    ADD_FAILURE() << "telemetry_offset_ms = period accepted";
  } catch (const hcase::SpecError& e) {
    EXPECT_EQ(e.field(), "telemetry_offset_ms");
  }
  try {
    hcase::parse_spec(spec_text("-1", ""), "t");
    ADD_FAILURE() << "negative offset accepted";
  } catch (const hcase::SpecError& e) {
    EXPECT_EQ(e.field(), "canaries.sqlite_offset_ms");
  }
}
