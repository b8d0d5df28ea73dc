// Type-7 quantiles (see quantile.hpp).
#include "analysis/stats/quantile.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace analysis {

namespace {
void check_p(double p) {
  if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("quantile7: p=" + std::to_string(p) + " outside [0, 1]");
}
std::size_t lower_index(std::size_t n, double p) { return static_cast<std::size_t>(std::floor(static_cast<double>(n - 1) * p)); }

/// Type-7 interpolation between the order statistics a = x(lo) and b = x(lo + 1) (b unused when
/// lo + 1 == n) of a sample of n; lo = lower_index(n, p).
double interpolate7(std::size_t n, double p, double a, const double* b) {
  const double h = static_cast<double>(n - 1) * p;
  const double lo_f = std::floor(h);
  const std::size_t lo = static_cast<std::size_t>(lo_f);
  const double w = h - lo_f;
  if (std::isnan(a)) throw std::invalid_argument("quantile7: NaN in sample");
  if (w == 0.0 || lo + 1 >= n) return a;
  if (std::isnan(*b)) throw std::invalid_argument("quantile7: NaN in sample");
  if (std::isinf(*b) || std::isinf(a)) return *b > a ? *b : a;
  return a + w * (*b - a);
}
}  // namespace

double quantile7_sorted(std::span<const double> x, double p) {
  if (x.empty()) throw std::invalid_argument("quantile7: empty sample");
  check_p(p);
  const std::size_t lo = lower_index(x.size(), p);
  return interpolate7(x.size(), p, x[lo], lo + 1 < x.size() ? &x[lo + 1] : nullptr);
}

double quantile7_select(std::vector<double>& v, double p) {
  if (v.empty()) throw std::invalid_argument("quantile7: empty sample");
  check_p(p);
  for (double x : v)
    if (std::isnan(x)) throw std::invalid_argument("quantile7: NaN in sample");
  const std::size_t lo = lower_index(v.size(), p);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  if (lo + 1 >= v.size()) return interpolate7(v.size(), p, v[lo], nullptr);
  const double b = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end());
  return interpolate7(v.size(), p, v[lo], &b);
}

double quantile7(std::span<const double> values, double p) {
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  return quantile7_sorted(v, p);
}

bool quantile7_interval_contains(std::span<const double> x, double p_lo, double p_hi, double t) {
  if (x.empty()) throw std::invalid_argument("quantile7: empty sample");
  check_p(p_lo);
  check_p(p_hi);
  if (p_lo > p_hi) throw std::invalid_argument("quantile7_interval_contains: p_lo > p_hi");
  if (std::isnan(t)) throw std::invalid_argument("quantile7_interval_contains: NaN bound");
  const double inf = std::numeric_limits<double>::infinity();
  std::size_t le = 0, lt = 0;  // #{x <= t}, #{x < t}
  double max_le = -inf, max_lt = -inf, min_gt = inf, min_ge = inf;
  for (double v : x) {
    if (std::isnan(v)) throw std::invalid_argument("quantile7: NaN in sample");
    if (v < t) {
      ++lt;
      ++le;
      max_lt = std::max(max_lt, v);
      max_le = std::max(max_le, v);
    } else if (v == t) {
      ++le;
      max_le = std::max(max_le, v);
      min_ge = std::min(min_ge, v);
    } else {
      min_gt = std::min(min_gt, v);
      min_ge = std::min(min_ge, v);
    }
  }
  const std::size_t n = x.size();
  // q(p_lo) <= t: x(k) and x(k+1) both <= t, or the interpolation between the last value
  // <= t (then x(k)) and the first one above it (x(k+1)) lands at or below t.
  const std::size_t klo = lower_index(n, p_lo);
  bool lower_ok;
  if (le >= klo + 2) lower_ok = true;
  else if (le <= klo) lower_ok = false;
  else lower_ok = interpolate7(n, p_lo, max_le, klo + 1 < n ? &min_gt : nullptr) <= t;
  if (!lower_ok) return false;
  // q(p_hi) >= t: the mirror image with the values < t.
  const std::size_t khi = lower_index(n, p_hi);
  if (lt <= khi) return true;
  if (lt >= khi + 2) return false;
  return interpolate7(n, p_hi, max_lt, khi + 1 < n ? &min_ge : nullptr) >= t;
}

std::vector<double> quantiles7(std::span<const double> values, std::span<const double> probs) {
  std::vector<double> v(values.begin(), values.end());
  std::vector<double> out;
  out.reserve(probs.size());
  for (double p : probs) out.push_back(quantile7_select(v, p));  // O(n) each, same values as a sort
  return out;
}

double median(std::span<const double> values) { return quantile7(values, 0.5); }

}  // namespace analysis
