#pragma once
// The primary analysis: the declared family of m matched-block p99 ratios (the study's four by
// default; analysis/data/arms.hpp) with stratified-bootstrap intervals at the simultaneous level 1 - alpha/m, the corrected secondary interval, the expected-coverage
// diagnostic, absolute p95/p99 differences in us, and the verdict. Rules: study (Table 4, decision
// rule); analysis/README.md (estimator, small-sample caution, not-assessable verdict, minimum B).
#include "analysis/stats/bootstrap.hpp"
#include "analysis/stats/coverage.hpp"
#include "analysis/data/triplets.hpp"
#include "analysis/tables/verdict.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// Settings: B, seed, threads (bootstrap), family-wise alpha and number of comparisons m.
/// `comparisons` serves the minimum-B check of preregistered_options (the declared family's m);
/// run_primary takes m from the family itself (TripletSet::comparisons).
struct PrimaryOptions {
  BootstrapOptions bootstrap;
  double alpha = 0.05;
  int comparisons = 4;
};

/// Primary-analysis options as preregistered: B = `replicates` when given, else the YAML's
/// analysis.bootstrap_replicates, else 10,000; alpha from the YAML, else 0.05; seed = `seed`
/// when given, else campaign_meta.seed, else 1 (threads left at 0). Problems (unreadable YAML,
/// a non-integer seed) are appended to `warnings`. `comparisons` = m, the size of the declared
/// family (declared_comparisons, analysis/data/arms.hpp: 4 for the study's). Errors:
/// std::invalid_argument when B is below minimum_replicates(alpha, m); the message names where B came from (the
/// YAML key when it came from there) and the minimum B.
PrimaryOptions preregistered_options(const std::map<std::string, std::string>& meta, std::optional<int> replicates,
                                     std::optional<std::uint64_t> seed, std::vector<std::string>& warnings);

/// One primary comparison (ratio scale treatment / comparator; < 1 favours the treatment).
struct ComparisonResult {
  std::string label;
  Canary canary = Canary::Compute;
  std::string treatment, comparator;  ///< arm names
  int triplets = 0;
  double estimate = 1;          ///< exp(mean over strata of stratum-mean log ratio)
  double lower = 1, upper = 1;  ///< prespecified percentile interval (primary result)
  double corrected_lower = 1, corrected_upper = 1;  ///< small-sample-corrected interval (secondary)
  double percent_change = 0;    ///< 100 (estimate - 1); negative = reduction
};

/// Absolute difference (treatment - comparator) in us, mean over strata of stratum means.
struct AbsDiffResult {
  std::string label;            ///< comparison label
  std::string quantile;         ///< "p95" | "p99"
  double estimate_us = 0, lower_us = 0, upper_us = 0;
};

/// Everything Table 4, the verdict and the absolute-difference table need.
struct PrimaryResult {
  double level = 0.9875;                      ///< per-comparison interval level 1 - alpha/m
  double alpha = 0.05;                        ///< family-wise alpha
  int m = 4;                                  ///< comparisons in the family
  int replicates = 0;
  std::uint64_t seed = 0;
  std::vector<ComparisonResult> comparisons;  ///< the family's m, in declared order
  std::vector<AbsDiffResult> abs_diffs;       ///< 2m: per comparison p95 then p99
  std::vector<ComparisonDef> family;          ///< the declared family analysed
  bool study_family = true;                   ///< the family is the study's four
  std::vector<std::string> arms;              ///< the campaign's arms, report order (run_primary: ts.arms)
  std::string unit = "triplet";               ///< the word for a block (run_primary: ts.unit; block_word)
  std::vector<int> stratum_sizes;             ///< triplets per stratum
  double expected_coverage = 0;               ///< plain interval, analytic (coverage.hpp) = coverage.per_comparison
  double expected_coverage_corrected = 0;     ///< corrected interval, analytic = coverage.corrected_per_comparison
  DesignCoverage coverage;                    ///< the whole analytic diagnostic at this design
  /// The prespecified verdict of a family of one treatment (the study's four: decide). For a family
  /// of several treatments (`per_treatment`): per_treatment_verdict, which judges no benefit over
  /// the family; the verdicts are `by_treatment`. Not assessable: not_assessable, either way.
  Verdict verdict;
  /// True when the family names two or more treatments (and the verdict is assessable): the
  /// prespecified verdicts are `by_treatment`, one per treatment (verdict.hpp decide_by_treatment).
  bool per_treatment = false;
  /// decide_by_treatment over the family: empty unless `per_treatment`. Prespecified: each
  /// treatment's own comparisons at the family's level.
  std::vector<std::pair<std::string, Verdict>> by_treatment;
  BootstrapResult log_bootstrap;              ///< replicates of the m mean log ratios (B x m)
};

/// Runs the primary analysis on complete blocks for the family ts.comparisons (m = its size). One bootstrap draws the resampling indices once
/// for all columns (log ratios and absolute differences), so every quantity uses the same indices.
/// Every stratum with one triplet: the verdict is not_assessable() (verdict.hpp). Errors:
/// std::invalid_argument when there is no complete triplet, or when B < minimum_replicates(alpha, m)
/// (the message names the minimum B).
PrimaryResult run_primary(const TripletSet& ts, const PrimaryOptions& opt);

/// The same estimator on a bare T x m log-ratio matrix (T x 2m absolute differences, or T x 0)
/// with stratum labels, one column per comparison of `family` (nullptr: the study's four, m = 4).
PrimaryResult run_primary_matrix(const Eigen::MatrixXd& log_ratios, const Eigen::MatrixXd& abs_diffs,
                                 const std::vector<int>& strata, const PrimaryOptions& opt,
                                 const std::vector<ComparisonDef>* family = nullptr);

}  // namespace analysis
