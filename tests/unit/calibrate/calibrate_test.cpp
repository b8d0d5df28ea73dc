// `harness calibrate`: bundle measures (as the analysis defines them), the 300 s
// projection and the choice rule, with exact numbers.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/calibrate/choose.hpp"
#include "harness/calibrate/grid.hpp"
#include "harness/calibrate/measure.hpp"
#include "harness/case/run/bundle.hpp"
#include "tests/common/case_bundle.hpp"

namespace {
constexpr std::int64_t kS = 1'000'000'000;

/// A 120 s pressure phase [10 s, 130 s]; pswpout grows 10,000 pages in the first 20 s, then
/// 100 pages/s; bg anon refaults 80/s after 20 s; bg some 5 ms/s; full 4 ms/s.
std::string write_bundle(const std::filesystem::path& dir) {
  auto b = test_support::completed_bundle("calib-a320-s128-v375-m300", "calibration", "r", "static-zram");
  b.page_size_bytes = 4096;
  b.outcome_json = R"({"load": {"achieved_rate_mib_s": 15.5, "episode": {"length_s": 110.0, "fraction_of_pressure": 0.9166}}})";
  b.phases = {{"warmup", 0, 10 * kS}, {"pressure", 10 * kS, 130 * kS}, {"recovery", 130 * kS, 135 * kS}};
  for (std::int64_t i = 0; i <= 135; ++i) {
    harness::case_::TelemetrySample t;
    t.t_ns = i * kS;
    const std::int64_t p = std::max<std::int64_t>(0, i - 10);  // seconds into pressure
    t.pswpout = 500 + (p <= 20 ? p * 500 : 10'000 + (p - 20) * 100);
    t.bg_workingset_refault_anon = 7 + (p <= 20 ? 0 : (p - 20) * 80);
    t.bg_workingset_refault_file = 3;
    t.fg_workingset_refault_anon = 0;
    t.fg_workingset_refault_file = 2 * p;
    t.bg_some_us = 5'000 * p;
    t.bg_full_us = 4'000 * p;
    b.telemetry.push_back(t);
  }
  const auto path = (dir / "b.db").string();
  harness::case_::write_bundle(path, b);
  return path;
}
}  // namespace

TEST(Calibrate, MeasuresAndProjectsABundle) {
  auto dir = std::filesystem::temp_directory_path() / ("hk_calib_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto m = harness::calibrate::measure_bundle(write_bundle(dir));
  EXPECT_EQ(m.status, "completed");
  EXPECT_DOUBLE_EQ(m.pressure_s, 120.0);
  // pswpout 10,000 + 100 x 100 = 20,000 pages x 4 KiB
  EXPECT_DOUBLE_EQ(*m.swapout_kib, 80'000.0);
  EXPECT_DOUBLE_EQ(*m.refault_anon_bg, 8'000.0);
  EXPECT_DOUBLE_EQ(*m.refault_all, 8'000.0 + 240.0);
  EXPECT_DOUBLE_EQ(*m.bg_some_s, 0.6);
  EXPECT_DOUBLE_EQ(*m.bg_full_s, 0.48);
  EXPECT_DOUBLE_EQ(*m.episode_s, 110.0);
  EXPECT_DOUBLE_EQ(*m.achieved_rate_mib_s, 15.5);
  // Second half (70 s .. 130 s): 100 pages/s and 80 refaults/s, projected over 180 s more.
  EXPECT_DOUBLE_EQ(*m.swapout_kib_300, 80'000.0 + 100 * 4 * 180);
  EXPECT_DOUBLE_EQ(*m.refault_anon_bg_300, 8'000.0 + 80 * 180);
  std::filesystem::remove_all(dir);
}

// A bundle measures only as far as it goes: the case row without a finished pressure phase,
// the phase's length without two samples in it; a phase as long as the target is not projected;
// the page size recorded is the one swap-out is counted in.
TEST(Calibrate, ABundleIsMeasuredAsFarAsItGoes) {
  auto dir = std::filesystem::temp_directory_path() / ("hk_calib_partial_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / "p.db").string();
  auto b = test_support::completed_bundle("calib-partial", "calibration", "r", "static-zram");
  b.status = "infra_failed";
  b.accelerator = "tcg";
  b.phases = {{"warmup", 0, 10 * kS}, {"pressure", 10 * kS, std::nullopt}};
  harness::case_::write_bundle(path, b);
  auto m = harness::calibrate::measure_bundle(path);
  EXPECT_EQ(m.case_id, "calib-partial");
  EXPECT_EQ(m.status, "infra_failed");
  EXPECT_EQ(m.accelerator, "tcg");
  EXPECT_DOUBLE_EQ(m.pressure_s, 0.0);
  EXPECT_FALSE(m.swapout_kib);

  b.phases = {{"pressure", 10 * kS, 310 * kS}};
  harness::case_::TelemetrySample t;
  t.t_ns = 10 * kS;
  t.pswpout = 100;
  t.bg_workingset_refault_anon = 5;
  b.telemetry = {t};
  harness::case_::write_bundle(path, b);
  m = harness::calibrate::measure_bundle(path);
  EXPECT_DOUBLE_EQ(m.pressure_s, 300.0);
  EXPECT_FALSE(m.swapout_kib) << "one sample is no difference";

  b.page_size_bytes = 16384;
  t.t_ns = 310 * kS;
  t.pswpout = 150;
  t.bg_workingset_refault_anon = 25;
  b.telemetry.push_back(t);
  harness::case_::write_bundle(path, b);
  m = harness::calibrate::measure_bundle(path);
  EXPECT_DOUBLE_EQ(*m.swapout_kib, 50 * 16.0);
  EXPECT_DOUBLE_EQ(*m.swapout_kib_300, 50 * 16.0);  // 300 s measured: nothing projected
  EXPECT_DOUBLE_EQ(*m.refault_anon_bg_300, 20.0);
  EXPECT_FALSE(m.refault_all) << "no bg file refaults recorded";
  EXPECT_FALSE(m.bg_some_s);
  // A longer target projects from the second half of the phase (one sample in it: none).
  EXPECT_FALSE(harness::calibrate::measure_bundle(path, 600).swapout_kib_300);
  std::filesystem::remove_all(dir);
}

TEST(Calibrate, RuleIsTheSmallestMaxRelativeError) {
  harness::calibrate::Measured a, b, c;
  a.swapout_kib_300 = 99'198 * 1.30;  // +30%
  a.refault_anon_bg_300 = 34'104;     // 0
  b.swapout_kib_300 = 99'198 * 1.10;  // +10%
  b.refault_anon_bg_300 = 34'104 * 0.85;  // -15%
  c.swapout_kib_300 = 99'198;         // no refaults measured: not eligible
  EXPECT_NEAR(*harness::calibrate::max_rel_error(a), 0.30, 1e-12);
  EXPECT_NEAR(*harness::calibrate::max_rel_error(b), 0.15, 1e-12);
  EXPECT_FALSE(harness::calibrate::max_rel_error(c));
  EXPECT_EQ(*harness::calibrate::choose({a, b, c}), 1u);
  EXPECT_FALSE(harness::calibrate::choose({c}));
  const auto t = harness::calibrate::table({{320, 128, 0.25, 300}, {340, 128, 0.5, 300}}, {a, b});
  EXPECT_NE(t.find("**chosen** 340 MiB / 128 MiB / 0.5 MiB/s / 300 MiB"), std::string::npos) << t;
  EXPECT_NE(t.find("bg some s (accelerator not recorded)"), std::string::npos) << t;
}

TEST(Calibrate, StallColumnsSayWhichAcceleratorTheyRanUnder) {
  harness::calibrate::Measured k1, k2;
  k1.accelerator = k2.accelerator = "kvm";
  const std::vector<harness::calibrate::Point> pts{{320, 128, 0.25, 300}, {340, 128, 0.5, 300}};
  const auto kvm = harness::calibrate::table(pts, {k1, k2});
  EXPECT_NE(kvm.find("| bg some s (KVM) | bg full s (KVM) |"), std::string::npos) << kvm;
  EXPECT_EQ(kvm.find("TCG-inflated"), std::string::npos) << kvm;
  k2.accelerator = "tcg";
  const auto mixed = harness::calibrate::table(pts, {k1, k2});
  EXPECT_NE(mixed.find("| bg some s (TCG-inflated) | bg full s (TCG-inflated) |"), std::string::npos) << mixed;
}

TEST(Calibrate, GridSkipsImpossiblePointsAndNamesCases) {
  auto g = harness::calibrate::make_grid({300, 320}, {128, 400}, {0.375}, {300});
  ASSERT_EQ(g.size(), 1u);  // 300 <= bg max; active 400 > allocation 320
  EXPECT_EQ(g[0].name(), "a320-s128-v375-m300");
  auto spec = harness::calibrate::spec_for(g[0], {});
  EXPECT_EQ(spec["case_id"], "calib-a320-s128-v375-m300");
  EXPECT_EQ(spec["configuration"], "static-zram");
  EXPECT_EQ(spec["pressure"]["allocation_bytes"], 320ll << 20);
  EXPECT_DOUBLE_EQ(spec["pressure"]["active_set_slide_mib_s"].get<double>(), 0.375);
  EXPECT_EQ(spec["phases_s"]["pressure"], 120);
}
