#pragma once
// Expected coverage of the stratified percentile bootstrap for a given design (n per stratum).
// Rule (analysis/README.md): the resampled mean of n units has variance (n-1)/n of
// the true one. Assuming equal within-stratum variances and a normal sampling distribution, the
// bootstrap variance of the mean over strata is f = sum_s (n_s-1)/n_s^2 / sum_s 1/n_s times the
// true one, so a nominal two-sided level L interval (z = Phi^-1(1 - (1-L)/2)) covers with
// probability 2 Phi(z sqrt(f)) - 1. This is the ANALYTIC variance-factor diagnostic; the statistics
// test tests/statistics/analysis checks it against simulation.
#include <vector>

namespace analysis {

/// Variance factor f of the plain bootstrap (1 = unbiased). n_s >= 1 per stratum.
/// Errors: std::invalid_argument on an empty design or n_s < 1.
double bootstrap_variance_factor(const std::vector<int>& n_per_stratum);

/// Variance factor of the sqrt(n/(n-1))-corrected bootstrap: strata with n_s = 1 still contribute
/// no variability (they cannot be corrected), others are unbiased.
double corrected_variance_factor(const std::vector<int>& n_per_stratum);

/// Expected per-comparison coverage 2 Phi(z sqrt(f)) - 1 of a nominal level-L interval.
double expected_coverage(double variance_factor, double level);

}  // namespace analysis
