// Analytic coverage diagnostic (see coverage.hpp).
#include "analysis/coverage.hpp"

#include <boost/math/distributions/normal.hpp>

#include <cmath>
#include <stdexcept>

namespace analysis {
namespace {
double sum_inv(const std::vector<int>& n) {
  if (n.empty()) throw std::invalid_argument("coverage: empty design (no strata)");
  double s = 0;
  for (int v : n) {
    if (v < 1) throw std::invalid_argument("coverage: stratum with n < 1");
    s += 1.0 / v;
  }
  return s;
}
}  // namespace

double bootstrap_variance_factor(const std::vector<int>& n) {
  const double denom = sum_inv(n);
  double num = 0;
  for (int v : n) num += (v - 1.0) / (static_cast<double>(v) * v);
  return num / denom;
}

double corrected_variance_factor(const std::vector<int>& n) {
  const double denom = sum_inv(n);
  double num = 0;
  for (int v : n)
    if (v > 1) num += 1.0 / v;
  return num / denom;
}

double expected_coverage(double f, double level) {
  boost::math::normal_distribution<double> N;
  const double z = boost::math::quantile(N, 1.0 - (1.0 - level) / 2.0);
  if (f <= 0) return 0.0;
  return 2.0 * boost::math::cdf(N, z * std::sqrt(f)) - 1.0;
}

}  // namespace analysis
