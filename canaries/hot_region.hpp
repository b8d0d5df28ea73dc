#pragma once
// The compute canary's work (study: "maintained a hot memory region and performed memory
// touches and computation"). Documented, deterministic:
//
//   Region: `hot_bytes` of private anonymous memory (mmap), filled at start-up with the
//   splitmix64 stream seeded by `seed` (every 4 KiB block written, so all pages are real,
//   dirty anonymous pages of the canary).
//   Request `seq`: for every 4 KiB block b = 0 .. blocks-1 in address order, take the
//   64-byte line L = (seq + b) mod 64 of the block, fold its 8 little-endian 64-bit words
//   into the accumulator with acc = splitmix64(acc ^ word) (8 mixes per block), and
//   write acc back to the first word of that line. The accumulator starts at
//   splitmix64(seed ^ seq). Cost per request: one read+write touch of every block of
//   the region and 8 * blocks mixes (16 MiB: 4096 blocks, 32768 mixes), bounded and
//   independent of the data. The result (acc) is returned so the work cannot be elided;
//   the same seed and request sequence give the same results.
#include <cstddef>
#include <cstdint>

namespace canaries {

/// splitmix64 finalizer (Steele et al.), a bijection on 64-bit words.
std::uint64_t splitmix64_mix(std::uint64_t x);

class HotRegion {
 public:
  /// Maps and fills `hot_bytes` (rounded up to 4 KiB blocks; must be > 0).
  /// Throws std::invalid_argument for 0, std::system_error when mmap fails.
  HotRegion(std::size_t hot_bytes, std::uint64_t seed);
  ~HotRegion();
  HotRegion(const HotRegion&) = delete;
  HotRegion& operator=(const HotRegion&) = delete;

  /// One request (see file comment); returns its accumulator.
  std::uint64_t request(std::uint64_t seq);
  /// Number of 4 KiB blocks.
  std::size_t blocks() const { return blocks_; }

 private:
  std::uint64_t* words_ = nullptr;
  std::size_t blocks_ = 0;
  std::uint64_t seed_ = 0;
};

}  // namespace canaries
