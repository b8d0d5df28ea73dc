#pragma once
// Seeding helpers shared by the planner and the allocation: a stable string hash and a
// portable Fisher-Yates shuffle (boost's uniform_int_distribution gives the same sequence
// with every standard library, so a plan's hash does not depend on the compiler).
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace harness::campaign {

/// FNV-1a 64 over `s`, folded into the running value `h` (plus a separator byte).
inline std::uint64_t fnv1a(std::uint64_t h, const std::string& s) {
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  h ^= 0xff;
  h *= 1099511628211ULL;
  return h;
}

/// Fisher-Yates with boost's portable uniform_int_distribution.
template <typename T>
void seeded_shuffle(std::vector<T>& v, boost::random::mt19937_64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) {
    boost::random::uniform_int_distribution<std::size_t> d(0, i - 1);
    std::swap(v[i - 1], v[d(rng)]);
  }
}

}  // namespace harness::campaign
