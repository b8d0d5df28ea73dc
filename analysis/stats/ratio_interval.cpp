// The delta-method t interval of a ratio of stratified means (see ratio_interval.hpp).
#include "analysis/stats/ratio_interval.hpp"

#include <boost/math/distributions/students_t.hpp>

#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

namespace analysis {
namespace {

std::map<std::string, std::vector<std::size_t>> by_stratum(const MetricPairs& p) {
  std::map<std::string, std::vector<std::size_t>> out;
  for (std::size_t i = 0; i < p.rows.size() && i < p.stratum.size(); ++i) out[p.stratum[i]].push_back(i);
  return out;
}

}  // namespace

std::optional<PairSpread> pair_spread(const MetricPairs& p) {
  const auto strata = by_stratum(p);
  if (strata.empty()) return std::nullopt;
  PairSpread s;
  for (const auto& [name, rows] : strata) {
    double sb = 0, sc = 0;
    for (auto i : rows) sb += p.rows[i][0], sc += p.rows[i][1];
    s.mean_b += sb / static_cast<double>(rows.size());
    s.mean_c += sc / static_cast<double>(rows.size());
  }
  s.mean_b /= static_cast<double>(strata.size());
  s.mean_c /= static_cast<double>(strata.size());
  if (!(s.mean_b > 0) || !(s.mean_c > 0)) return std::nullopt;
  double ss = 0;
  for (const auto& [name, rows] : strata) {
    if (rows.size() < 2) continue;
    std::vector<double> u;
    for (auto i : rows) u.push_back(p.rows[i][1] / s.mean_c - p.rows[i][0] / s.mean_b);
    double mean = 0;
    for (double x : u) mean += x;
    mean /= static_cast<double>(u.size());
    for (double x : u) ss += (x - mean) * (x - mean);
    s.df += static_cast<int>(u.size()) - 1;
    s.pairs += static_cast<int>(u.size());
  }
  if (s.df < 1) return std::nullopt;
  s.sigma = std::sqrt(ss / s.df);
  return s;
}

std::optional<DeltaTInterval> delta_t_interval(const MetricPairs& p, double level) {
  if (!(level > 0 && level < 1)) throw std::invalid_argument("delta_t_interval: level must lie in (0, 1)");
  const auto s = pair_spread(p);
  if (!s) return std::nullopt;
  const auto strata = by_stratum(p);
  double inv = 0;
  for (const auto& [name, rows] : strata) inv += 1.0 / static_cast<double>(rows.size());
  DeltaTInterval r;
  r.df = s->df;
  r.ratio = s->mean_c / s->mean_b;
  r.se_log = s->sigma * std::sqrt(inv) / static_cast<double>(strata.size());
  const double t = boost::math::quantile(boost::math::students_t(s->df), 1 - (1 - level) / 2);
  r.lower = r.ratio * std::exp(-t * r.se_log);
  r.upper = r.ratio * std::exp(t * r.se_log);
  return r;
}

}  // namespace analysis
