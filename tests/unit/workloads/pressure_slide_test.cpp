// The sliding active window of pressure-gen (generator.hpp): it starts at page
// floor(slide x elapsed / 4 KiB), modulo the allocated pages; slide 0 keeps the v1 window.
#include <gtest/gtest.h>

#include "fakes.hpp"
#include "pressure/generator.hpp"
#include "pressure/options.hpp"

namespace {
pressure::GeneratorConfig config(double slide_mib_s) {
  pressure::GeneratorConfig cfg;
  cfg.allocation_bytes = 8 << 20;  // 2048 pages
  cfg.active_set_bytes = 2 << 20;
  cfg.chunk_bytes = 1 << 20;
  cfg.rate_bytes_per_s = 64.0 * 1048576;
  cfg.seed = 1;
  cfg.duration_ns = 10'000'000'000;
  cfg.active_slide_bytes_per_s = slide_mib_s * 1048576;
  return cfg;
}
}  // namespace

TEST(GeneratorSlide, WindowStartMovesAtTheSlideSpeedAndWraps) {
  workloads_test::FakeClock clock;
  clock.step_per_read_ns = 1'000'000;  // 1 ms of fake time per clock read
  const auto r = pressure::run_generator(config(1.0), clock, [] { return false; });
  EXPECT_TRUE(r.allocation_complete);
  // 10 s at 1 MiB/s = 2560 pages (the final read is < 4 ms late: < 1 page), mod 2048 = 512.
  EXPECT_EQ(r.window_start_page, 512u);
  EXPECT_GT(r.touch_passes, 10u);
}

TEST(GeneratorSlide, NoSlideKeepsTheFirstPages) {
  workloads_test::FakeClock clock;
  clock.step_per_read_ns = 1'000'000;
  const auto r = pressure::run_generator(config(0.0), clock, [] { return false; });
  EXPECT_EQ(r.window_start_page, 0u);
}

TEST(GeneratorSlide, NegativeSlideIsRefused) {
  workloads_test::FakeClock clock;
  EXPECT_THROW(pressure::run_generator(config(-1.0), clock, [] { return false; }), std::invalid_argument);
  pressure::Options o;
  o.allocation_mib = 8;
  o.rate_mib_s = 1;
  o.active_set_mib = 2;
  o.contents = "structured";
  o.seed_given = true;
  o.active_set_slide_mib_s = -0.5;
  try {
    pressure::validate(o);
    ADD_FAILURE() << "negative slide accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--active-set-slide-mib-s"), std::string::npos) << e.what();
  }
}
