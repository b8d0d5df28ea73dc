// Confound parsers (proc(5) formats) and the outcome_json steal/load summaries.
#include <gtest/gtest.h>

#include "harness/case/host/confounds.hpp"
#include "harness/case/run/load_summary.hpp"

TEST(Confounds, StealIsTheEighthValueOfTheCpuLine) {
  const std::string stat =
      "cpu  4705 356 584 3699 23 0 11 1234 0 0\n"
      "cpu0 4705 356 584 3699 23 0 11 1234 0 0\n"
      "intr 114930548 113199788 3 0 5\n";
  EXPECT_EQ(*harness::case_::parse_steal_us(stat, 100), 12'340'000);
  EXPECT_EQ(*harness::case_::parse_steal_us(stat, 250), 4'936'000);
  EXPECT_FALSE(harness::case_::parse_steal_us("cpu  1 2 3\n", 100));
  EXPECT_FALSE(harness::case_::parse_steal_us("intr 1 2\n", 100));
}

TEST(Confounds, CpuTimeSkipsACommWithSpacesAndParens) {
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
  const std::string st = "4242 (harness (x) y) S 1 4242 4242 0 -1 4194560 500 0 3 0 250 75 0 0 20 0 3 0\n";
  EXPECT_EQ(*harness::case_::parse_cpu_ns(st, 100), (250 + 75) * 10'000'000ll);
  EXPECT_FALSE(harness::case_::parse_cpu_ns("4242 harness S 1", 100));
  EXPECT_FALSE(harness::case_::parse_cpu_ns("4242 (h) S 1 2", 100));
}

TEST(Confounds, PeakRssIsVmHWM) {
  EXPECT_EQ(*harness::case_::parse_peak_rss_kib("Name:\tharness\nVmPeak:\t  50000 kB\nVmHWM:\t    9876 kB\nVmRSS:\t 9000 kB\n"),
            9876);
  EXPECT_FALSE(harness::case_::parse_peak_rss_kib("Name:\tkthreadd\n"));
}

TEST(Confounds, ReadsThisProcess) {
  harness::kernel::Fs fs("/");
  auto u = harness::case_::read_usage(fs, 0);
  ASSERT_TRUE(u.cpu_ns);
  ASSERT_TRUE(u.peak_rss_kib);
  EXPECT_GT(*u.peak_rss_kib, 100);  // a gtest binary has > 100 KiB resident
  EXPECT_TRUE(harness::case_::read_steal_us(fs));
}

TEST(Confounds, StealSummary) {
  std::vector<harness::case_::TelemetrySample> s(4);
  const std::int64_t t[] = {0, 1'000'000'000, 2'000'000'000, 4'000'000'000};
  const std::int64_t v[] = {1'000, 1'000, 31'000, 71'000};
  for (int i = 0; i < 4; ++i) s[i].t_ns = t[i], s[i].steal_us = v[i];
  auto j = harness::case_::steal_summary(s).to_json();
  EXPECT_EQ(j["total_us"], 70'000);
  EXPECT_DOUBLE_EQ(j["max_per_s_us"].get<double>(), 30'000.0);  // 40,000 over 2 s is 20,000/s
  EXPECT_EQ(j["samples"], 4);
  s.resize(1);
  EXPECT_TRUE(harness::case_::steal_summary(s).to_json()["total_us"].is_null());
}

TEST(LoadSummary, AchievedRateAndEpisode) {
  auto spec = harness::case_::load_spec_file("tests/unit/case/fixtures/spec-study.json");  // 32 MiB/s, 300 s
  nlohmann::json report{{"allocated_mib", 600.0}, {"allocation_elapsed_s", 25.0}};
  const std::int64_t S = 1'000'000'000;
  std::vector<harness::case_::ControllerEvent> ev = {
      {10 * S, "window", 0, 500, 0, 0, nullptr, S, 0},        // below 1000 us
      {11 * S, "window", 0, 1000, 1, 1, nullptr, S, 0},       // first: starts at 10 s
      {12 * S, "trigger", 0, 1000, 1, 1, nullptr, std::nullopt, std::nullopt},
      {13 * S, "window", 0, 5000, 0, 0, nullptr, 2 * S, 1},   // irregular, still pressure
      {70 * S, "window", 0, 1200, 1, 1, nullptr, S, 0},       // last: ends at 70 s
      {71 * S, "window", 0, 0, 0, 0, nullptr, S, 0}};
  auto j = harness::case_::load_summary(spec, report, ev).to_json();
  EXPECT_EQ(j["allocation_bytes"], 600ll << 20);
  EXPECT_EQ(j["allocation_elapsed_ns"], 25 * S);
  EXPECT_DOUBLE_EQ(j["achieved_rate_mib_s"].get<double>(), 24.0);
  EXPECT_DOUBLE_EQ(j["nominal_rate_mib_s"].get<double>(), 32.0);
  EXPECT_DOUBLE_EQ(j["rate_shortfall"].get<double>(), 0.25);
  EXPECT_EQ(j["episode"]["first_ns"], 10 * S);
  EXPECT_EQ(j["episode"]["last_ns"], 70 * S);
  EXPECT_DOUBLE_EQ(j["episode"]["length_s"].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(j["episode"]["fraction_of_pressure"].get<double>(), 0.2);
  EXPECT_EQ(j["episode"]["windows_with_growth"], 3);
  auto none = harness::case_::load_summary(spec, nullptr, {}).to_json();
  EXPECT_TRUE(none["achieved_rate_mib_s"].is_null());
  EXPECT_TRUE(none["episode"]["length_s"].is_null());
  EXPECT_EQ(none["episode"]["windows_with_growth"], 0);
}
