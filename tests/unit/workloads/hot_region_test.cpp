// canary-compute's work: deterministic by seed, touches every 4 KiB block.
#include "canaries/hot_region.hpp"

#include <gtest/gtest.h>

TEST(HotRegion, DeterministicBySeedAndSequence) {
  canaries::HotRegion a(16 << 20, 5), b(16 << 20, 5), c(16 << 20, 6);
  EXPECT_EQ(a.blocks(), 4096u);  // 16 MiB / 4 KiB
  std::uint64_t ra = 0, rb = 0, rc = 0;
  for (std::uint64_t seq = 0; seq < 20; ++seq) {
    const std::uint64_t x = a.request(seq), y = b.request(seq);
    EXPECT_EQ(x, y) << "seq " << seq;
    ra ^= x;
    rb ^= y;
    rc ^= c.request(seq);
  }
  EXPECT_EQ(ra, rb);
  EXPECT_NE(ra, rc);
}

TEST(HotRegion, RequestsWriteBackIntoTheRegion) {
  // Same seq twice gives a different result because the first request wrote its
  // accumulator into the lines it read.
  canaries::HotRegion a(1 << 20, 1);
  const std::uint64_t first = a.request(3);
  EXPECT_NE(first, a.request(3));
}

TEST(HotRegion, RoundsUpToBlocksAndRejectsZero) {
  canaries::HotRegion a(5000, 1);
  EXPECT_EQ(a.blocks(), 2u);
  EXPECT_THROW(canaries::HotRegion(0, 1), std::invalid_argument);
}
