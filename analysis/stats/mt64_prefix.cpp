// Prefix of boost::random::mt19937_64 and Boost's uniform_int_distribution rule (see mt64_prefix.hpp).
#include "analysis/stats/mt64_prefix.hpp"

#include <algorithm>
#include <limits>

namespace analysis {

namespace {

using U = std::uint64_t;
using Engine = Mt64Prefix::Engine;
constexpr int L = Mt64Prefix::kLanes;

/// out[j][l] = output j (< P) of mt19937_64 seeded with seed[l]. Integer operations only, so the
/// AVX2 / AVX-512 clones (picked at load time by the CPU) give the same bits as the default one.
__attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
void prefix_outputs(const U* seed, int P, U (*out)[L]) {
  constexpr int M = static_cast<int>(Engine::shift_size);
  constexpr U f = Engine::initialization_multiplier;
  constexpr int w2 = static_cast<int>(Engine::word_size) - 2;
  constexpr U upper = ~U{0} << Engine::mask_bits, lower = ~upper;
  // Seeding chain x[i] = f * (x[i-1] ^ (x[i-1] >> (w-2))) + i (Boost's seed(value)); keep
  // x[0..P] (lo) and x[M..M+P-1] (hi), lanes innermost.
  alignas(64) U lo[Mt64Prefix::kMaxPrefix + 1][L], hi[Mt64Prefix::kMaxPrefix][L], v[L];
  for (int l = 0; l < L; ++l) v[l] = lo[0][l] = seed[l];
  for (int i = 1; i <= P; ++i) {
    for (int l = 0; l < L; ++l) v[l] = f * (v[l] ^ (v[l] >> w2)) + static_cast<U>(i);
    for (int l = 0; l < L; ++l) lo[i][l] = v[l];
  }
  for (int i = P + 1; i < M; ++i)
    for (int l = 0; l < L; ++l) v[l] = f * (v[l] ^ (v[l] >> w2)) + static_cast<U>(i);
  for (int i = std::max(M, P + 1); i < M + P; ++i) {
    for (int l = 0; l < L; ++l) v[l] = f * (v[l] ^ (v[l] >> w2)) + static_cast<U>(i);
    for (int l = 0; l < L; ++l) hi[i - M][l] = v[l];
  }
  if (P == M)
    for (int l = 0; l < L; ++l) hi[0][l] = lo[M][l];  // x[M] was kept in lo
  // First twist, words j < P (Boost's twist(), first loop), then tempering.
  for (int j = 0; j < P; ++j)
    for (int l = 0; l < L; ++l) {
      const U y = (lo[j][l] & upper) | (lo[j + 1][l] & lower);
      U z = hi[j][l] ^ (y >> 1) ^ ((U{0} - (lo[j + 1][l] & 1)) & Engine::xor_mask);
      z ^= (z >> Engine::tempering_u) & Engine::tempering_d;
      z ^= (z << Engine::tempering_s) & Engine::tempering_b;
      z ^= (z << Engine::tempering_t) & Engine::tempering_c;
      z ^= z >> Engine::tempering_l;
      out[j][l] = z;
    }
}

}  // namespace

void Mt64Prefix::fill(const std::uint64_t* seeds, int lanes, int prefix) {
  prefix_ = std::clamp(prefix, 1, kMaxPrefix);
  for (int l = 0; l < kLanes; ++l) {
    seed_[l] = l < lanes ? seeds[l] : 0;
    engine_[l].reset();
  }
  prefix_outputs(seed_.data(), prefix_, out_);
}

std::uint64_t Mt64Prefix::late(int lane, int k) {
  auto& e = engine_[lane];
  if (!e) {
    e.emplace(seed_[lane]);
    e->discard(static_cast<std::uintmax_t>(k));
  }
  return (*e)();
}

UniformIndex::UniformIndex(int n) : n_(n) {
  if (n <= 1) return;
  // Boost: brange = 2^64 - 1 > range = n - 1; bucket = brange / n, plus one when
  // brange % n == n - 1 (i.e. n divides 2^64); result = z / bucket, accepted when <= range.
  constexpr std::uint64_t brange = std::numeric_limits<std::uint64_t>::max();
  const auto un = static_cast<std::uint64_t>(n);
  bucket_ = brange / un;
  if (brange % un == un - 1) ++bucket_;
  inv_ = brange / bucket_;  // q estimate = floor(z * inv / 2^64) is at most 2 below z / bucket
}

}  // namespace analysis
