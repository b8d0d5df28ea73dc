#include "canaries/percentile.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace canaries {

double quantile_type7_sorted(std::span<const double> x, double p) {
  if (x.empty()) throw std::invalid_argument("quantile of an empty sample");
  if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("quantile p=" + std::to_string(p) + " outside [0, 1]");
  const double h = static_cast<double>(x.size() - 1) * p;
  const double lo = std::floor(h);
  const std::size_t i = static_cast<std::size_t>(lo);
  if (i + 1 >= x.size()) return x[x.size() - 1];
  return x[i] + (h - lo) * (x[i + 1] - x[i]);
}

double quantile_type7(std::vector<double> sample, double p) {
  std::sort(sample.begin(), sample.end());
  return quantile_type7_sorted(sample, p);
}

}  // namespace canaries
