// pressure-gen: page contents, pacing math, the generator loop on an injected clock,
// and flag validation.
#include "fakes.hpp"
#include "pressure/generator.hpp"
#include "pressure/options.hpp"
#include "pressure/pacing.hpp"
#include "pressure/page_contents.hpp"

#include <boost/random/mersenne_twister.hpp>
#include <gtest/gtest.h>

#include <vector>

using pressure::Contents;
using pressure::kPageBytes;
using pressure::PageGenerator;

namespace {
std::vector<unsigned char> pages(Contents c, std::uint64_t seed, int n) {
  PageGenerator g(c, seed);
  std::vector<unsigned char> v(kPageBytes * n);
  for (int i = 0; i < n; ++i) g.fill(v.data() + i * kPageBytes);
  return v;
}
}  // namespace

TEST(PageContents, ReproducibleBySeed) {
  EXPECT_EQ(pages(Contents::Random, 3, 8), pages(Contents::Random, 3, 8));
  EXPECT_EQ(pages(Contents::Structured, 3, 8), pages(Contents::Structured, 3, 8));
  EXPECT_NE(pages(Contents::Random, 3, 8), pages(Contents::Random, 4, 8));
  EXPECT_NE(pages(Contents::Structured, 3, 8), pages(Contents::Random, 3, 8));
}

TEST(PageContents, RandomPagesAreTheMt19937_64Stream) {
  const auto v = pages(Contents::Random, 42, 2);
  boost::random::mt19937_64 eng(42);
  for (std::size_t i = 0; i < v.size(); i += 8) {
    const std::uint64_t w = eng();
    for (int b = 0; b < 8; ++b) ASSERT_EQ(v[i + b], static_cast<unsigned char>(w >> (8 * b))) << "byte " << i + b;
  }
}

TEST(PageContents, StructuredPageLayout) {
  const auto v = pages(Contents::Structured, 9, 3);
  boost::random::mt19937_64 eng(9);
  for (int p = 0; p < 3; ++p) {
    const unsigned char* page = v.data() + p * kPageBytes;
    // One third random: 171 outputs, the last truncated to 5 bytes.
    for (std::size_t i = 0; i < pressure::kStructuredRandomBytes; i += 8) {
      const std::uint64_t w = eng();
      for (std::size_t b = 0; b < 8 && i + b < pressure::kStructuredRandomBytes; ++b) {
        ASSERT_EQ(page[i + b], static_cast<unsigned char>(w >> (8 * b)));
      }
    }
    // Two thirds: the 16-byte pattern {page index, seed}.
    for (std::size_t i = pressure::kStructuredRandomBytes; i < kPageBytes; ++i) {
      const std::size_t k = (i - pressure::kStructuredRandomBytes) % 16;
      const std::uint64_t field = k < 8 ? static_cast<std::uint64_t>(p) : 9u;
      ASSERT_EQ(page[i], static_cast<unsigned char>(field >> (8 * (k % 8)))) << "page " << p << " byte " << i;
    }
  }
}

TEST(Pacing, ChunkStartsFollowTheAbsoluteBudget) {
  const double mib_s = 16.0 * 1048576;
  EXPECT_EQ(pressure::chunk_start_ns(1000, 1 << 20, mib_s), 1000 + 62'500'000);
  EXPECT_EQ(pressure::chunk_start_ns(1000, 10 << 20, mib_s), 1000 + 625'000'000);
  EXPECT_EQ(pressure::chunk_start_ns(0, 256ULL << 20, 256.0 * 1048576), 1'000'000'000);
  EXPECT_DOUBLE_EQ(pressure::achieved_rate_mib_s(64ULL << 20, 2'000'000'000), 32.0);
  EXPECT_EQ(pressure::achieved_rate_mib_s(1, 0), 0.0);
}

TEST(Generator, AllocatesOnScheduleAndTouchesActiveSet) {
  workloads_test::FakeClock clock;
  clock.t = 1'000'000'000;
  clock.step_per_read_ns = 10'000;  // each clock read costs 10 us of fake time
  pressure::GeneratorConfig cfg;
  cfg.allocation_bytes = 8 << 20;
  cfg.active_set_bytes = 2 << 20;
  cfg.chunk_bytes = 1 << 20;
  cfg.rate_bytes_per_s = 64.0 * 1048576;
  cfg.seed = 1;
  cfg.duration_ns = 1'000'000'000;
  const auto r = pressure::run_generator(cfg, clock, [] { return false; });
  EXPECT_TRUE(r.allocation_complete);
  EXPECT_EQ(r.allocated_bytes, 8u << 20);
  EXPECT_EQ(r.chunks, 8u);
  // The last chunk may start at t0 + 8 MiB / 64 MiB/s = 125 ms; it starts within one poll.
  EXPECT_GE(r.allocation_elapsed_ns, 125'000'000);
  EXPECT_LE(r.allocation_elapsed_ns, 125'000'000 + 30'000);
  EXPECT_LE(r.max_chunk_lag_ns, 20'000);
  const double achieved = pressure::achieved_rate_mib_s(r.allocated_bytes, r.allocation_elapsed_ns);
  EXPECT_NEAR(achieved, 64.0, 0.05);
  EXPECT_GE(r.elapsed_ns, 1'000'000'000);
  EXPECT_FALSE(r.stopped);
  // Touching never stops: passes over 512 active pages in 64-page slices, one slice per
  // clock read of 10 us, from the first chunk (15.625 ms) to the end (1 s).
  EXPECT_GT(r.touch_passes, 1000u);
  EXPECT_EQ(r.touched_pages % 64, 0u);
}

TEST(Generator, KeepsTouchingWhenAllocationIsBehindSchedule) {
  // Each clock read costs 10 s of fake time at 1 MiB/s: every chunk is overdue when the
  // loop looks. After each 1 MiB chunk (256 pages) it must still touch 256 active pages.
  workloads_test::FakeClock clock;
  clock.step_per_read_ns = 10'000'000'000;
  pressure::GeneratorConfig cfg;
  cfg.allocation_bytes = 8 << 20;
  cfg.active_set_bytes = 2 << 20;  // 512 pages
  cfg.chunk_bytes = 1 << 20;
  cfg.rate_bytes_per_s = 1.0 * 1048576;
  cfg.seed = 3;
  cfg.duration_ns = 85'000'000'000;  // ends right after the 8th chunk (reads at 10, 20, ... 90 s)
  const auto r = pressure::run_generator(cfg, clock, [] { return false; });
  EXPECT_TRUE(r.allocation_complete);
  EXPECT_EQ(r.chunks, 8u);
  EXPECT_EQ(r.touched_pages, 8u * 256);
  // Active pages: 256 after chunk 0, then 512. Cursor wraps after chunks 0, 2, 4, 6.
  EXPECT_EQ(r.touch_passes, 4u);
  EXPECT_EQ(r.max_chunk_lag_ns, 72'000'000'000);  // chunk 7: looked at 80 s, due at 8 s
}

TEST(Generator, StopMidAllocationStillReports) {
  workloads_test::FakeClock clock;
  clock.step_per_read_ns = 1'000'000;
  pressure::GeneratorConfig cfg;
  cfg.allocation_bytes = 64 << 20;
  cfg.active_set_bytes = 0;  // nothing to touch: the loop sleeps until each chunk start
  cfg.chunk_bytes = 1 << 20;
  cfg.rate_bytes_per_s = 16.0 * 1048576;
  cfg.seed = 2;
  int polls = 0;
  const auto r = pressure::run_generator(cfg, clock, [&] { return ++polls > 40; });
  EXPECT_TRUE(r.stopped);
  EXPECT_FALSE(r.allocation_complete);
  EXPECT_GT(r.allocated_bytes, 0u);
  EXPECT_LT(r.allocated_bytes, 64u << 20);
  EXPECT_EQ(r.touch_passes, 0u);
  EXPECT_EQ(r.allocation_elapsed_ns, r.elapsed_ns);
}

namespace {
std::string validate_error(const std::string& args) {
  CLI::App app;
  pressure::Options o;
  pressure::add_options(app, o);
  try {
    app.parse(args, false);
    pressure::validate(o);
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "<no error>";
}
}  // namespace

TEST(PressureOptions, ErrorsNameTheFlag) {
  // Builds a command line from the valid one, with one flag replaced or removed.
  auto line = [](const std::string& flag, const std::string& value) {
    const std::vector<std::pair<std::string, std::string>> ok = {{"--allocation-mib", "600"},
                                                                 {"--rate-mib-s", "32"},
                                                                 {"--active-set-mib", "128"},
                                                                 {"--contents", "random"},
                                                                 {"--seed", "1"}};
    std::string s;
    for (const auto& [f, v] : ok) {
      if (f == flag) {
        if (value != "<drop>") s += f + " " + value + " ";
      } else {
        s += f + " " + v + " ";
      }
    }
    return s;
  };
  auto names = [&](const std::string& flag, const std::string& value) {
    const std::string msg = validate_error(line(flag, value));
    return msg.find(flag) != std::string::npos ? std::string("named") : msg;
  };
  EXPECT_EQ(validate_error(line("", "")), "<no error>");
  EXPECT_EQ(validate_error(line("", "") + " --chunk-mib 4 --duration-s 300"), "<no error>");
  EXPECT_EQ(names("--allocation-mib", "<drop>"), "named");
  EXPECT_EQ(names("--allocation-mib", "x"), "named");
  EXPECT_EQ(names("--rate-mib-s", "<drop>"), "named");
  EXPECT_EQ(names("--rate-mib-s", "-3"), "named");
  EXPECT_EQ(names("--active-set-mib", "<drop>"), "named");
  EXPECT_EQ(names("--active-set-mib", "601"), "named");  // larger than the allocation
  EXPECT_EQ(names("--contents", "zeros"), "named");
  EXPECT_EQ(names("--contents", "<drop>"), "named");
  EXPECT_EQ(names("--seed", "<drop>"), "named");
  EXPECT_NE(validate_error(line("", "") + " --chunk-mib 0").find("--chunk-mib"), std::string::npos);
  EXPECT_NE(validate_error(line("", "") + " --duration-s 0").find("--duration-s"), std::string::npos);
  // dump mode needs only contents and seed
  EXPECT_EQ(validate_error("--dump-sample /tmp/s.bin --contents structured --seed 1"), "<no error>");
}
