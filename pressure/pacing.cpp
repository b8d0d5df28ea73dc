#include "pressure/pacing.hpp"

#include <cmath>

namespace pressure {

std::int64_t chunk_start_ns(std::int64_t t0_ns, std::uint64_t bytes_after, double rate_bytes_per_s) {
  return t0_ns + static_cast<std::int64_t>(std::llround(static_cast<double>(bytes_after) * 1e9 / rate_bytes_per_s));
}

double achieved_rate_mib_s(std::uint64_t bytes, std::int64_t elapsed_ns) {
  if (elapsed_ns <= 0) return 0;
  return (static_cast<double>(bytes) / 1048576.0) / (static_cast<double>(elapsed_ns) / 1e9);
}

}  // namespace pressure
