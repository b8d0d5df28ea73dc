// A paired ratio against a tolerance (see paired_ratio.hpp).
#include "analysis/stats/paired_ratio.hpp"

#include "analysis/stats/bootstrap.hpp"
#include "analysis/stats/ratio_interval.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace analysis {
namespace {

std::string num_text(double v) {
  if (v >= std::numeric_limits<double>::max()) return "inf";
  return std::abs(v) >= 1000 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

/// "max_ratio 1.2, min_ratio 0.8" of a comparison's tolerance ("" without one).
std::string allowed_text(const MetricComparison& r) {
  std::string allowed;
  if (r.max_ratio) allowed += "max_ratio " + num_text(*r.max_ratio);
  if (r.min_ratio) allowed += std::string(allowed.empty() ? "" : ", ") + "min_ratio " + num_text(*r.min_ratio);
  return allowed;
}

/// The clause of a regression's detail: which side of the tolerance the interval lies beyond.
std::string beyond_text(const MetricComparison& r, double lower) {
  return r.max_ratio && lower > *r.max_ratio ? "; the whole interval lies above max_ratio " + num_text(*r.max_ratio)
                                             : "; the whole interval lies below min_ratio " + num_text(*r.min_ratio);
}

}  // namespace

bool is_regression(double lower, double upper, std::optional<double> max_ratio, std::optional<double> min_ratio) {
  return (max_ratio && lower > *max_ratio) || (min_ratio && upper < *min_ratio);
}

std::string metric_verdict(double ratio, double lower, double upper, std::optional<double> max_ratio,
                           std::optional<double> min_ratio) {
  if (is_regression(lower, upper, max_ratio, min_ratio)) return "regression";
  if ((max_ratio && ratio > *max_ratio) || (min_ratio && ratio < *min_ratio)) return "inconclusive";
  return "ok";
}

std::string change_of(double lower, double upper) {
  if (lower > 1) return "higher";
  if (upper < 1) return "lower";
  return "none shown";
}

namespace {

/// compare_pairs under VerdictRule::decide once the means are known: the delta-method t
/// interval (ratio_interval.hpp) and sequential_verdict.
MetricComparison decided_comparison(MetricComparison r, const MetricPairs& p, double level) {
  const auto iv = delta_t_interval(p, level);
  const std::string means = fmt::format("baseline {} {}, candidate {} {}", num_text(*r.baseline_mean), r.unit,
                                        num_text(*r.candidate_mean), r.unit);
  const std::string allowed = allowed_text(r);
  if (!iv) {
    r.verdict = r.max_ratio || r.min_ratio ? "inconclusive" : "reported";
    r.detail = fmt::format("ratio {}, {} pairs in {} strata ({}); no stratum holds two pairs: no interval yet",
                           num_text(*r.ratio), r.pairs, r.strata, means);
    return r;
  }
  r.lower = iv->lower;
  r.upper = iv->upper;
  r.change = change_of(iv->lower, iv->upper);
  const std::string what = fmt::format("ratio {} [{}, {}] at {:g}% (delta-method t, df {}), {} pairs in {} strata ({})",
                                       num_text(*r.ratio), num_text(iv->lower), num_text(iv->upper), level * 100,
                                       iv->df, r.pairs, r.strata, means);
  if (!r.max_ratio && !r.min_ratio) {
    r.verdict = "reported";
    r.detail = what + "; no tolerance";
    return r;
  }
  r.verdict = sequential_verdict(iv->lower, iv->upper, r.max_ratio, r.min_ratio);
  if (r.verdict == "regression")
    r.detail = what + beyond_text(r, iv->lower);
  else if (r.verdict == "ok-decided")
    r.detail = what + "; the whole interval lies within the tolerance " + allowed;
  else
    r.detail = what + "; the interval is neither wholly beyond nor wholly within the tolerance " + allowed +
               ": more pairs would decide";
  return r;
}

}  // namespace

std::string sequential_verdict(double lower, double upper, std::optional<double> max_ratio,
                               std::optional<double> min_ratio) {
  if (is_regression(lower, upper, max_ratio, min_ratio)) return "regression";
  const bool within = (!max_ratio || upper <= *max_ratio) && (!min_ratio || lower >= *min_ratio);
  return within ? "ok-decided" : "inconclusive";
}

MetricComparison compare_pairs(const RegressionMetric& m, const MetricPairs& p, std::optional<double> max_ratio,
                               std::optional<double> min_ratio, double level, const BootstrapOptions& bo,
                               VerdictRule rule) {
  if (p.rows.size() != p.stratum.size())
    throw std::invalid_argument(std::string("compare_pairs: ") + m.name + ": " + std::to_string(p.rows.size()) +
                                " rows but " + std::to_string(p.stratum.size()) + " stratum labels");
  MetricComparison r;
  r.metric = m.name;
  r.unit = m.unit;
  r.level = level;
  r.max_ratio = max_ratio;
  r.min_ratio = min_ratio;
  const std::set<std::string> strata_names(p.stratum.begin(), p.stratum.end());
  r.pairs = static_cast<int>(p.rows.size());
  r.strata = static_cast<int>(strata_names.size());
  if (p.rows.empty()) {
    r.verdict = "no data";
    r.detail = "no pair with both members completed and the metric measured";
    return r;
  }
  std::map<std::string, int> label;
  for (const auto& s : strata_names) label.emplace(s, static_cast<int>(label.size()));
  Eigen::MatrixXd data(static_cast<Eigen::Index>(p.rows.size()), 2);
  std::vector<int> strata;
  for (std::size_t i = 0; i < p.rows.size(); ++i) {
    data(static_cast<Eigen::Index>(i), 0) = p.rows[i][0];
    data(static_cast<Eigen::Index>(i), 1) = p.rows[i][1];
    strata.push_back(label.at(p.stratum[i]));
  }
  const Eigen::VectorXd point = stratified_mean(data, strata);
  r.baseline_mean = point(0);
  r.candidate_mean = point(1);
  if (!(point(0) > 0)) {
    r.verdict = "no data";
    r.detail = fmt::format("baseline mean is {} {}: the ratio is undefined ({} pairs)", num_text(point(0)), r.unit, r.pairs);
    return r;
  }
  r.ratio = point(1) / point(0);
  if (rule == VerdictRule::decide) return decided_comparison(std::move(r), p, level);
  const auto boot = stratified_bootstrap(data, strata, bo);
  // Replicate ratio = candidate / baseline mean. A replicate whose baseline mean is 0 (every
  // resampled pair 0 in every stratum; counters can be 0): ratio +inf (shown "inf") when the
  // candidate mean is > 0, 1 when both are 0 (no change) (ours).
  Eigen::VectorXd rep(boot.plain.rows());
  for (Eigen::Index i = 0; i < rep.size(); ++i) {
    const double mb = boot.plain(i, 0), mc = boot.plain(i, 1);
    rep(i) = mb > 0 ? mc / mb : mc > 0 ? std::numeric_limits<double>::max() : 1.0;
  }
  const auto iv = percentile_interval(rep, level);
  r.lower = iv.lower;
  r.upper = iv.upper;
  r.change = change_of(iv.lower, iv.upper);
  const std::string what = fmt::format("ratio {} [{}, {}] at {:g}%, {} pairs in {} strata (baseline {} {}, "
                                       "candidate {} {})",
                                       num_text(*r.ratio), num_text(iv.lower), num_text(iv.upper), level * 100, r.pairs, r.strata,
                                       num_text(point(0)), r.unit, num_text(point(1)), r.unit);
  const std::string allowed = allowed_text(r);
  if (!r.max_ratio && !r.min_ratio) {
    r.verdict = "reported";
    r.detail = what + "; no tolerance";
    return r;
  }
  r.verdict = metric_verdict(*r.ratio, iv.lower, iv.upper, r.max_ratio, r.min_ratio);
  if (r.verdict == "regression")
    r.detail = what + beyond_text(r, iv.lower);
  else if (r.verdict == "inconclusive")
    r.detail = what + "; the ratio is past the tolerance " + allowed +
               " but the interval is not wholly beyond it: more pairs would decide";
  else
    r.detail = what + "; tolerance " + allowed + " (a regression needs the whole interval beyond it)";
  return r;
}

double comparison_level(double alpha, int toleranced_metrics, int looks) {
  if (looks < 1) throw std::invalid_argument("comparison_level: looks must be >= 1");
  // Bonferroni over the metrics that have a tolerance (m >= 1) and over the looks.
  return simultaneous_level(alpha, std::max(1, toleranced_metrics) * looks);
}

}  // namespace analysis
