#pragma once
// Expected coverage of the stratified percentile bootstrap for a given design (n per stratum).
// Rule (analysis/README.md): the resampled mean of n units has variance (n-1)/n of the true
// one. Assuming equal within-stratum variances and normal errors, the bootstrap variance of
// the mean over strata is f = sum_s (n_s-1)/n_s^2 / sum_s 1/n_s times the true one in
// expectation, and it is itself estimated from the data: a weighted sum of the stratum sample
// variances with Satterthwaite's degrees of freedom nu = (sum_s c_s)^2 / sum_s c_s^2/(n_s-1)
// (c_s the stratum's weight in it). The bootstrap distribution of a small stratum's resampled
// mean has lighter tails than a normal one (a stratum of 2 resamples to 3 values), so its
// extreme percentiles sit closer in: expected excess kurtosis g = sum_s w_s^2 E[k4_s] /
// (sum_s w_s E[v_s])^2 with, for normal data of unit variance, E[k4_s] = -6 (n_s-1)/n_s^5 and
// E[v_s] = (n_s-1)/n_s^2 (w_s = 1 plain, n_s/(n_s-1) corrected), and the interval reaches
// z' = z + g/24 (z^3 - 3 z) (Cornish-Fisher) standard deviations of it. A nominal two-sided
// level-L interval (z = Phi^-1(1 - (1-L)/2)) then covers with probability
// P(|T_nu| < z' sqrt(f)) = 2 F_nu(z' sqrt(f)) - 1 (Student t); with nu -> infinity and g = 0
// this is 2 Phi(z sqrt(f)) - 1. Four intervals
// together cover with probability at least the product of the four (Sidak's inequality for
// normal estimates, equality when they are independent). This is the ANALYTIC diagnostic; the
// simulation (coverage_sim.hpp) measures it, and tests/statistics/analysis checks one against
// the other at the repository's designs.
#include <string>
#include <utility>
#include <vector>

namespace analysis {

/// The design as (triplets per stratum, number of strata) pairs, by descending triplets.
std::vector<std::pair<int, int>> design_of(const std::vector<int>& n_per_stratum);

/// The design in words: "24 strata of 2, 12 strata of 1" ("1 stratum of 1").
std::string design_text(const std::vector<int>& n_per_stratum);

/// Variance factor f of the plain bootstrap (1 = unbiased). n_s >= 1 per stratum.
/// Errors: std::invalid_argument on an empty design or n_s < 1.
double bootstrap_variance_factor(const std::vector<int>& n_per_stratum);

/// Variance factor of the sqrt(n/(n-1))-corrected bootstrap: strata with n_s = 1 still contribute
/// no variability (they cannot be corrected), others are unbiased.
double corrected_variance_factor(const std::vector<int>& n_per_stratum);

/// Satterthwaite degrees of freedom of the bootstrap variance (plain, or corrected when
/// `corrected`): (sum c_s)^2 / sum c_s^2 / (n_s - 1) over strata with n_s > 1, with c_s =
/// (n_s-1)/n_s^2 (plain) or 1/n_s (corrected). 0 when every stratum has one triplet. Same errors.
double bootstrap_degrees_of_freedom(const std::vector<int>& n_per_stratum, bool corrected);

/// Expected excess kurtosis of the bootstrap distribution of the mean over strata (plain, or
/// corrected when `corrected`), normal data with equal variances; 0 when every stratum has one
/// triplet. Same errors.
double bootstrap_excess_kurtosis(const std::vector<int>& n_per_stratum, bool corrected);

/// Expected per-comparison coverage 2 Phi(z sqrt(f)) - 1 of a nominal level-L interval (normal,
/// the variance known up to the factor f). 0 when f <= 0.
double expected_coverage(double variance_factor, double level);

/// The same with the variance estimated on `df` degrees of freedom and the percentile reaching
/// z' = z + kurtosis/24 (z^3 - 3 z): 2 F_df(z' sqrt(f)) - 1 (Student t); f <= 0 or df <= 0
/// gives 0 (zero-width intervals), df = infinity the normal form.
double expected_coverage_t(double variance_factor, double df, double level, double kurtosis = 0);

/// Expected coverage of a design, both intervals (the report's design table, `harness plan`).
struct DesignCoverage {
  double variance_factor = 0, corrected_variance_factor = 0;
  double df = 0, corrected_df = 0;          ///< Satterthwaite degrees of freedom
  double kurtosis = 0, corrected_kurtosis = 0;  ///< expected excess kurtosis of the bootstrap distribution
  double per_comparison = 0;                ///< prespecified interval, P(|T_df| < z' sqrt(f))
  double corrected_per_comparison = 0;      ///< corrected interval
  double joint = 0, corrected_joint = 0;    ///< all `comparisons` at once: Sidak lower bound (product)
};
/// Errors as bootstrap_variance_factor; `comparisons` >= 1 (study: 4).
DesignCoverage expected_design_coverage(const std::vector<int>& n_per_stratum, double level, int comparisons = 4);

}  // namespace analysis
