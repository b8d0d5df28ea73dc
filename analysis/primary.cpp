// Primary analysis (see primary.hpp).
#include "analysis/primary.hpp"

#include "analysis/coverage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace analysis {

PrimaryResult run_primary_matrix(const Eigen::MatrixXd& logr, const Eigen::MatrixXd& absd,
                                 const std::vector<int>& strata, const PrimaryOptions& opt) {
  if (logr.rows() == 0) throw std::invalid_argument("primary analysis: no complete matched triplet");
  if (logr.cols() != 4) throw std::invalid_argument("primary analysis: log-ratio matrix must have 4 columns");
  if (absd.rows() != logr.rows() || (absd.cols() != 8 && absd.cols() != 0))
    throw std::invalid_argument("primary analysis: absolute-difference matrix must be T x 8 (or T x 0)");
  const int min_b = minimum_replicates(opt.alpha, opt.comparisons);
  if (opt.bootstrap.replicates < min_b)
    throw std::invalid_argument(fmt::format(
        "primary analysis: B = {} bootstrap replicates is too small for a {:.4g}% percentile interval: at least 10 "
        "replicates are needed in each tail (alpha/(2 m) x B >= 10 with alpha = {}, m = {}): minimum B = {}",
        opt.bootstrap.replicates, simultaneous_level(opt.alpha, opt.comparisons) * 100, opt.alpha, opt.comparisons,
        min_b));
  Eigen::MatrixXd all(logr.rows(), 4 + absd.cols());
  all.leftCols(4) = logr;
  if (absd.cols()) all.rightCols(absd.cols()) = absd;

  PrimaryResult r;
  r.level = simultaneous_level(opt.alpha, opt.comparisons);
  r.alpha = opt.alpha;
  r.m = opt.comparisons;
  r.replicates = opt.bootstrap.replicates;
  r.seed = opt.bootstrap.seed;
  BootstrapResult b = stratified_bootstrap(all, strata, opt.bootstrap);
  r.stratum_sizes = b.stratum_sizes;
  r.coverage = expected_design_coverage(b.stratum_sizes, r.level, opt.comparisons);
  r.expected_coverage = r.coverage.per_comparison;
  r.expected_coverage_corrected = r.coverage.corrected_per_comparison;

  const auto& defs = primary_comparisons();
  std::array<RatioInterval, 4> for_rule;
  for (int j = 0; j < 4; ++j) {
    auto& c = r.comparisons[j];
    c.label = defs[j].label;
    c.canary = defs[j].canary;
    c.comparator = defs[j].comparator;
    c.triplets = static_cast<int>(logr.rows());
    c.estimate = std::exp(b.point(j));
    const Interval p = percentile_interval(b.plain.col(j), r.level);
    const Interval q = percentile_interval(b.corrected.col(j), r.level);
    c.lower = std::exp(p.lower);
    c.upper = std::exp(p.upper);
    c.corrected_lower = std::exp(q.lower);
    c.corrected_upper = std::exp(q.upper);
    c.percent_change = 100.0 * (c.estimate - 1.0);
    for_rule[j] = {c.label, c.estimate, c.lower, c.upper};
  }
  for (int j = 0; j < static_cast<int>(absd.cols()); ++j) {
    AbsDiffResult a;
    a.label = defs[j / 2].label;
    a.quantile = (j % 2) ? "p99" : "p95";
    a.estimate_us = b.point(4 + j);
    const Interval p = percentile_interval(b.plain.col(4 + j), r.level);
    a.lower_us = p.lower;
    a.upper_us = p.upper;
    r.abs_diffs.push_back(a);
  }
  const bool all_single = std::all_of(b.stratum_sizes.begin(), b.stratum_sizes.end(), [](int n) { return n == 1; });
  r.verdict = all_single ? not_assessable(static_cast<int>(b.stratum_sizes.size())) : decide(for_rule);
  r.log_bootstrap.point = b.point.head(4);
  r.log_bootstrap.plain = b.plain.leftCols(4);
  r.log_bootstrap.corrected = b.corrected.leftCols(4);
  r.log_bootstrap.stratum_sizes = b.stratum_sizes;
  return r;
}

PrimaryResult run_primary(const TripletSet& ts, const PrimaryOptions& opt) {
  if (ts.triplets.empty()) throw std::invalid_argument("primary analysis: no complete matched triplet");
  return run_primary_matrix(log_ratio_matrix(ts), abs_diff_matrix(ts), stratum_labels(ts), opt);
}

}  // namespace analysis
