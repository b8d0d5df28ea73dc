// Analytic coverage diagnostic (see coverage.hpp).
#include "analysis/stats/coverage.hpp"

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <limits>
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

double z_of(double level) {
  if (!(level > 0 && level < 1)) throw std::invalid_argument("coverage: level must be in (0, 1)");
  boost::math::normal_distribution<double> N;
  return boost::math::quantile(N, 1.0 - (1.0 - level) / 2.0);
}
}  // namespace

std::vector<std::pair<int, int>> design_of(const std::vector<int>& n) {
  std::map<int, int, std::greater<int>> m;
  for (int v : n) ++m[v];
  return {m.begin(), m.end()};
}

std::string design_text(const std::vector<int>& n) {
  std::string s;
  for (const auto& [size, count] : design_of(n))
    s += (s.empty() ? "" : ", ") + std::to_string(count) + (count == 1 ? " stratum of " : " strata of ") +
         std::to_string(size);
  return s;
}

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

double bootstrap_degrees_of_freedom(const std::vector<int>& n, bool corrected) {
  sum_inv(n);  // validates
  double sum = 0, sum_sq = 0;
  for (int v : n) {
    if (v < 2) continue;
    const double c = corrected ? 1.0 / v : (v - 1.0) / (static_cast<double>(v) * v);
    sum += c;
    sum_sq += c * c / (v - 1.0);
  }
  return sum_sq > 0 ? sum * sum / sum_sq : 0.0;
}

double bootstrap_excess_kurtosis(const std::vector<int>& n, bool corrected) {
  sum_inv(n);  // validates
  double num = 0, den = 0;
  for (int v : n) {
    if (v < 2) continue;
    const double nd = v, w = corrected ? nd / (nd - 1) : 1.0;
    num += w * w * (-6.0 * (nd - 1) / std::pow(nd, 5));  // E[kappa4 of a resampled mean of n], sigma = 1
    den += w * (nd - 1) / (nd * nd);                     // E[its variance]
  }
  return den > 0 ? num / (den * den) : 0.0;
}

double expected_coverage(double f, double level) {
  const double z = z_of(level);
  if (f <= 0) return 0.0;
  boost::math::normal_distribution<double> N;
  return 2.0 * boost::math::cdf(N, z * std::sqrt(f)) - 1.0;
}

double expected_coverage_t(double f, double df, double level, double kurtosis) {
  const double z0 = z_of(level);
  const double z = z0 + kurtosis / 24.0 * (z0 * z0 * z0 - 3.0 * z0);  // Cornish-Fisher
  if (f <= 0 || df <= 0) return 0.0;
  if (!std::isfinite(df)) {
    boost::math::normal_distribution<double> N;
    return 2.0 * boost::math::cdf(N, z * std::sqrt(f)) - 1.0;
  }
  boost::math::students_t_distribution<double> T(df);
  return 2.0 * boost::math::cdf(T, z * std::sqrt(f)) - 1.0;
}

DesignCoverage expected_design_coverage(const std::vector<int>& n, double level, int comparisons) {
  if (comparisons < 1) throw std::invalid_argument("coverage: comparisons must be >= 1");
  DesignCoverage d;
  d.variance_factor = bootstrap_variance_factor(n);
  d.corrected_variance_factor = corrected_variance_factor(n);
  d.df = bootstrap_degrees_of_freedom(n, false);
  d.corrected_df = bootstrap_degrees_of_freedom(n, true);
  d.kurtosis = bootstrap_excess_kurtosis(n, false);
  d.corrected_kurtosis = bootstrap_excess_kurtosis(n, true);
  d.per_comparison = expected_coverage_t(d.variance_factor, d.df, level, d.kurtosis);
  d.corrected_per_comparison = expected_coverage_t(d.corrected_variance_factor, d.corrected_df, level, d.corrected_kurtosis);
  d.joint = std::pow(d.per_comparison, comparisons);
  d.corrected_joint = std::pow(d.corrected_per_comparison, comparisons);
  return d;
}

}  // namespace analysis
