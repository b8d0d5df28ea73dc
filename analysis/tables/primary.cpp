// Primary analysis (see primary.hpp).
#include "analysis/tables/primary.hpp"

#include "analysis/data/arms.hpp"
#include "analysis/data/campaign_settings.hpp"
#include "analysis/stats/coverage.hpp"
#include "harness/text/join.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace analysis {

namespace {

/// The prespecified verdict(s) of an assessable family into r.verdict, r.by_treatment and
/// r.per_treatment: decide() over a family of one treatment; one verdict per treatment otherwise
/// (its own comparisons; the study's words for a treatment whose comparisons are the study's four).
void decide_family(const std::vector<ComparisonDef>& defs, const std::vector<RatioInterval>& for_rule,
                   PrimaryResult& r) {
  std::vector<std::string> treatments;
  for (const auto& d : defs) treatments.push_back(d.treatment);
  r.by_treatment = decide_by_treatment(for_rule, treatments, [&](const std::string& t, const std::vector<std::size_t>& at) {
    std::vector<ComparisonDef> own;
    for (std::size_t j : at) own.push_back(defs[j]);
    if (is_study_family(own)) return std::string();
    return fmt::format("{}'s {} comparison{} ({})", t, own.size(), own.size() == 1 ? "" : "s",
                       harness::text::join(own, "; ", [](const ComparisonDef& c) { return c.label; }));
  });
  r.per_treatment = !r.by_treatment.empty();
  r.verdict = r.per_treatment ? per_treatment_verdict(r.by_treatment, r.level, r.alpha, r.m)
                              : decide(for_rule, 0.95, r.study_family ? std::string() : family_text(defs));
}

}  // namespace

PrimaryResult run_primary_matrix(const Eigen::MatrixXd& logr, const Eigen::MatrixXd& absd,
                                 const std::vector<int>& strata, const PrimaryOptions& opt,
                                 const std::vector<ComparisonDef>* family) {
  const auto& defs = family ? *family : study_comparisons();
  const int m = static_cast<int>(defs.size());
  if (logr.rows() == 0) throw std::invalid_argument("primary analysis: no complete matched triplet");
  if (m < 1) throw std::invalid_argument("primary analysis: the family has no comparison");
  if (logr.cols() != m)
    throw std::invalid_argument(fmt::format("primary analysis: log-ratio matrix must have {} columns", m));
  if (absd.rows() != logr.rows() || (absd.cols() != 2 * m && absd.cols() != 0))
    throw std::invalid_argument(
        fmt::format("primary analysis: absolute-difference matrix must be T x {} (or T x 0)", 2 * m));
  const int min_b = minimum_replicates(opt.alpha, m);
  if (opt.bootstrap.replicates < min_b)
    throw std::invalid_argument(fmt::format(
        "primary analysis: B = {} bootstrap replicates is too small for a {:.4g}% percentile interval: at least 10 "
        "replicates are needed in each tail (alpha/(2 m) x B >= 10 with alpha = {}, m = {}): minimum B = {}",
        opt.bootstrap.replicates, simultaneous_level(opt.alpha, m) * 100, opt.alpha, m, min_b));
  Eigen::MatrixXd all(logr.rows(), m + absd.cols());
  all.leftCols(m) = logr;
  if (absd.cols()) all.rightCols(absd.cols()) = absd;

  PrimaryResult r;
  r.level = simultaneous_level(opt.alpha, m);
  r.alpha = opt.alpha;
  r.m = m;
  r.family = defs;
  r.study_family = is_study_family(defs);
  r.replicates = opt.bootstrap.replicates;
  r.seed = opt.bootstrap.seed;
  BootstrapResult b = stratified_bootstrap(all, strata, opt.bootstrap);
  r.stratum_sizes = b.stratum_sizes;
  r.coverage = expected_design_coverage(b.stratum_sizes, r.level, m);
  r.expected_coverage = r.coverage.per_comparison;
  r.expected_coverage_corrected = r.coverage.corrected_per_comparison;

  std::vector<RatioInterval> for_rule(static_cast<std::size_t>(m));
  r.comparisons.resize(static_cast<std::size_t>(m));
  for (int j = 0; j < m; ++j) {
    auto& c = r.comparisons[j];
    c.label = defs[j].label;
    c.canary = defs[j].canary;
    c.treatment = defs[j].treatment;
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
    a.estimate_us = b.point(m + j);
    const Interval p = percentile_interval(b.plain.col(m + j), r.level);
    a.lower_us = p.lower;
    a.upper_us = p.upper;
    r.abs_diffs.push_back(a);
  }
  const bool all_single = std::all_of(b.stratum_sizes.begin(), b.stratum_sizes.end(), [](int n) { return n == 1; });
  if (all_single) r.verdict = not_assessable(static_cast<int>(b.stratum_sizes.size()));
  else decide_family(defs, for_rule, r);
  r.log_bootstrap.point = b.point.head(m);
  r.log_bootstrap.plain = b.plain.leftCols(m);
  r.log_bootstrap.corrected = b.corrected.leftCols(m);
  r.log_bootstrap.stratum_sizes = b.stratum_sizes;
  return r;
}

PrimaryResult run_primary(const TripletSet& ts, const PrimaryOptions& opt) {
  if (ts.triplets.empty()) throw std::invalid_argument("primary analysis: no complete matched triplet");
  PrimaryResult r = run_primary_matrix(log_ratio_matrix(ts), abs_diff_matrix(ts), stratum_labels(ts), opt, &ts.family());
  r.arms = ts.arms;
  r.unit = ts.unit;
  if (!r.verdict.assessable) r.verdict = not_assessable(static_cast<int>(r.stratum_sizes.size()), r.unit);
  return r;
}

PrimaryOptions preregistered_options(const std::map<std::string, std::string>& meta, std::optional<int> replicates,
                                     std::optional<std::uint64_t> seed, std::vector<std::string>& warnings) {
  const auto settings = read_campaign_settings(meta);
  warnings.insert(warnings.end(), settings.warnings.begin(), settings.warnings.end());
  PrimaryOptions opt;
  opt.bootstrap.replicates = replicates ? *replicates : settings.bootstrap_replicates.value_or(10000);
  opt.alpha = settings.alpha.value_or(0.05);
  {  // m = the declared family's size (analysis/data/arms.hpp; its warnings come with load_campaign)
    std::vector<std::string> ignored;
    opt.comparisons = static_cast<int>(declared_comparisons(meta, ignored).comparisons.size());
  }
  if (const int min_b = minimum_replicates(opt.alpha, opt.comparisons); opt.bootstrap.replicates < min_b)
    throw std::invalid_argument(fmt::format("{}{} is too small: at least 10 replicates in each tail at the "
                                            "simultaneous level need alpha/(2 m) x B >= 10, minimum B = {}",
                                            replicates ? "" : "campaign YAML analysis.bootstrap_replicates ",
                                            opt.bootstrap.replicates, min_b));
  opt.bootstrap.seed = 1;
  if (seed) {
    opt.bootstrap.seed = *seed;
  } else if (auto it = meta.find("seed"); it != meta.end()) {
    try {
      opt.bootstrap.seed = std::stoull(it->second);
    } catch (...) {
      warnings.push_back("campaign_meta.seed '" + it->second + "' is not an integer; bootstrap seed 1 used");
    }
  }
  return opt;
}

}  // namespace analysis
