#pragma once
// The first outputs of boost::random::mt19937_64 seeded with one 64-bit value, computed for
// kLanes generators at once, bit-identical to constructing `boost::random::mt19937_64 g(seed)`
// and calling g() (checked against Boost in tests/unit/analysis/test_mt64_prefix.cpp). (ours)
//
// Why: the bootstrap uses one generator per replicate (thread-count independence) and draws
// only about N (rows) values from each. A full Boost engine computes a 312-word seeding chain
// plus a 312-word twist before its first output; output j < 156 needs only state words
// 0..j+1 and 156..156+j, so `prefix` outputs need a chain of 155 + prefix steps and no twist.
// The kLanes chains are independent and run interleaved (the chain is latency-bound).
//
// Draws past the prefix fall back to a real Boost engine (seeded the same way, discard(k)),
// so every draw sequence is exact however long.
#include <boost/random/mersenne_twister.hpp>

#include <array>
#include <cstdint>
#include <optional>

namespace analysis {

/// kLanes mt19937_64 generators, each yielding its first `prefix` (<= kMaxPrefix) outputs from
/// a precomputed table and any later output from a Boost engine built on demand.
class Mt64Prefix {
 public:
  using Engine = boost::random::mt19937_64;
  static constexpr int kLanes = 8;
  static constexpr int kMaxPrefix = static_cast<int>(Engine::state_size - Engine::shift_size);  // 156

  /// Computes the first `prefix` outputs (clamped to [1, kMaxPrefix]) of the engines seeded with
  /// seeds[0..lanes-1]; lanes in [1, kLanes]. Lanes >= `lanes` are unused.
  void fill(const std::uint64_t* seeds, int lanes, int prefix);

  /// Output k (0-based) of lane `lane`, called with k = 0, 1, 2, ... in order per lane
  /// (k past the prefix steps a Boost engine that is created on first need).
  std::uint64_t output(int lane, int k) {
    if (k < prefix_) return out_[k][lane];
    return late(lane, k);
  }

 private:
  std::uint64_t late(int lane, int k);

  int prefix_ = 0;
  std::array<std::uint64_t, kLanes> seed_{};
  alignas(64) std::uint64_t out_[kMaxPrefix][kLanes]{};  // [output][lane]
  std::array<std::optional<Engine>, kLanes> engine_;
};

/// boost::random::uniform_int_distribution<int>(0, n - 1) on a 64-bit engine, exactly (same
/// bucket rule and rejection), with the 64-bit division replaced by a multiply and a
/// correction. n >= 1; n == 1 consumes no output (as Boost).
class UniformIndex {
 public:
  explicit UniformIndex(int n);
  int n() const { return n_; }
  /// Accepts z as bucket index z / bucket when that is < n; returns -1 to reject (draw again).
  int map(std::uint64_t z) const {
    std::uint64_t q = static_cast<std::uint64_t>((static_cast<unsigned __int128>(z) * inv_) >> 64);
    std::uint64_t rem = z - q * bucket_;
    while (rem >= bucket_) {
      ++q;
      rem -= bucket_;
    }
    return q < static_cast<std::uint64_t>(n_) ? static_cast<int>(q) : -1;
  }

 private:
  int n_ = 1;
  std::uint64_t bucket_ = 0, inv_ = 0;
};

}  // namespace analysis
