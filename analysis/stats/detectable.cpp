// What an A/B design can detect (see detectable.hpp).
#include "analysis/stats/detectable.hpp"

#include <boost/math/distributions/students_t.hpp>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace analysis {

DetectableChange detectable_change(const std::string& metric, std::optional<double> max_ratio,
                                   std::optional<double> min_ratio, std::optional<double> sigma,
                                   const std::vector<int>& planned, double level, double power,
                                   const std::string& why) {
  if (planned.empty()) throw std::invalid_argument("detectable_change: no planned stratum");
  for (int n : planned)
    if (n < 1) throw std::invalid_argument("detectable_change: a planned stratum has " + std::to_string(n) + " pairs");
  if (!(level > 0 && level < 1)) throw std::invalid_argument("detectable_change: level must lie in (0, 1)");
  if (!(power > 0 && power < 1)) throw std::invalid_argument("detectable_change: power must lie in (0, 1)");
  DetectableChange d;
  d.metric = metric;
  d.max_ratio = max_ratio;
  d.min_ratio = min_ratio;
  d.sigma = sigma;
  if (!sigma) {
    d.why_unknown = why;
    return d;
  }
  double inv = 0;
  int df = 0;
  for (int n : planned) inv += 1.0 / n, df += n - 1;
  if (df < 1) {  // one pair per stratum: no within-stratum spread, so no interval to decide with
    d.up_from_one = std::numeric_limits<double>::infinity();
    d.down_from_one = 0.0;
    if (max_ratio) d.above_tolerance = d.up_from_one;
    if (min_ratio) d.below_tolerance = 0.0;
    d.insensitive = max_ratio || min_ratio;
    return d;
  }
  const double se = *sigma * std::sqrt(inv) / static_cast<double>(planned.size());
  const boost::math::students_t t(df);
  const double k = boost::math::quantile(t, 1 - (1 - level) / 2) + boost::math::quantile(t, power);
  d.se_log = se;
  d.df = df;
  d.up_from_one = std::exp(k * se);
  d.down_from_one = std::exp(-k * se);
  if (max_ratio) d.above_tolerance = *max_ratio * std::exp(k * se);
  if (min_ratio) d.below_tolerance = *min_ratio * std::exp(-k * se);
  d.insensitive = (max_ratio && *d.up_from_one > *max_ratio) || (min_ratio && *d.down_from_one < *min_ratio);
  return d;
}

RepeatsNeeded repeats_needed(std::optional<double> max_ratio, std::optional<double> min_ratio,
                             std::optional<double> sigma, int strata, double level, double power, int max_repeats) {
  RepeatsNeeded out;
  if (!sigma || (!max_ratio && !min_ratio) || strata < 1 || max_repeats < 1) return out;
  const auto detects = [&](int r) {
    return !detectable_change("", max_ratio, min_ratio, sigma, std::vector<int>(static_cast<std::size_t>(strata), r),
                              level, power)
                .insensitive;
  };
  if (!detects(max_repeats)) return {RepeatsNeeded::Outcome::beyond_cap, max_repeats};
  int lo = 0, hi = max_repeats;  // detects(hi); !detects(lo) (lo = 0 stands for "none")
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (detects(mid) ? hi : lo) = mid;
  }
  return {RepeatsNeeded::Outcome::found, hi};
}

namespace {

/// The configuration of a stratum "vm/regime/configuration".
std::string configuration_of(const std::string& stratum) { return stratum.substr(stratum.rfind('/') + 1); }

/// The planned pairs of the strata whose configuration `p` measures (all when it measures none).
std::vector<int> planned_for(const MetricPairs& p, const std::map<std::string, int>& planned) {
  std::set<std::string> measured;
  for (const auto& s : p.stratum) measured.insert(configuration_of(s));
  std::vector<int> out;
  for (const auto& [stratum, n] : planned)
    if (measured.empty() || measured.count(configuration_of(stratum))) out.push_back(n);
  return out;
}

}  // namespace

std::vector<DetectableChange> detectable_changes(const std::vector<RegressionMetric>& metrics,
                                                 const std::map<std::string, MetricPairs>& pairs,
                                                 const std::string& source, const std::vector<MetricTolerance>& tolerances,
                                                 const std::map<std::string, int>& planned, double level,
                                                 double power) {
  if (planned.empty()) throw std::invalid_argument("detectable_changes: no planned stratum");
  std::vector<DetectableChange> out;
  for (const auto& m : metrics) {
    const MetricTolerance* t = nullptr;
    for (const auto& x : tolerances) t = x.metric == m.name ? &x : t;
    if (!t) continue;
    const auto found = pairs.find(m.name);
    if (found == pairs.end()) throw std::invalid_argument("detectable_changes: no pairs of " + std::string(m.name));
    const auto& p = found->second;
    const auto spread = pair_spread(p);
    const std::optional<double> sigma = spread ? std::optional<double>(spread->sigma) : std::nullopt;
    std::string why;
    if (!sigma)
      why = p.rows.empty() ? source + " holds no pair with both members completed and " + m.name + " measured"
                           : source + ": " + std::to_string(p.rows.size()) + " pair(s) of " + m.name +
                                 ", but no stratum holds two, or a mean is 0";
    const auto mine = planned_for(p, planned);
    if (mine.empty()) {  // the DB measures it only in configurations the plan does not have
      DetectableChange d;
      d.metric = m.name;
      d.max_ratio = t->max_ratio;
      d.min_ratio = t->min_ratio;
      d.why_unknown = "no planned stratum is of a configuration that measures it in " + source;
      out.push_back(std::move(d));
      continue;
    }
    auto d = detectable_change(m.name, t->max_ratio, t->min_ratio, sigma, mine, level, power, why);
    d.variance_pairs = spread ? spread->pairs : 0;
    d.planned_strata = static_cast<int>(mine.size());
    for (int n : mine) d.planned_pairs += n;
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace analysis
