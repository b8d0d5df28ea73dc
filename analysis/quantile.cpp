// Type-7 quantiles (see quantile.hpp).
#include "analysis/quantile.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace analysis {

double quantile7_sorted(std::span<const double> x, double p) {
  if (x.empty()) throw std::invalid_argument("quantile7: empty sample");
  if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("quantile7: p=" + std::to_string(p) + " outside [0, 1]");
  const std::size_t n = x.size();
  const double h = static_cast<double>(n - 1) * p;
  const double lo_f = std::floor(h);
  const std::size_t lo = static_cast<std::size_t>(lo_f);
  const double w = h - lo_f;
  const double a = x[lo];
  if (std::isnan(a)) throw std::invalid_argument("quantile7: NaN in sample");
  if (w == 0.0 || lo + 1 >= n) return a;
  const double b = x[lo + 1];
  if (std::isnan(b)) throw std::invalid_argument("quantile7: NaN in sample");
  if (std::isinf(b) || std::isinf(a)) return b > a ? b : a;
  return a + w * (b - a);
}

double quantile7(std::span<const double> values, double p) {
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  return quantile7_sorted(v, p);
}

std::vector<double> quantiles7(std::span<const double> values, std::span<const double> probs) {
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  std::vector<double> out;
  out.reserve(probs.size());
  for (double p : probs) out.push_back(quantile7_sorted(v, p));
  return out;
}

double median(std::span<const double> values) { return quantile7(values, 0.5); }

}  // namespace analysis
