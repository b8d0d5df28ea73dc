#pragma once
// Sample quantiles for the canary summaries: Hyndman & Fan type 7 (numpy.percentile's
// default "linear" method; docs/DESIGN.md "Analysis"). With the sample sorted ascending
// x[0..n-1] and h = (n - 1) * p: Q(p) = x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h]).
// Q(0) = min, Q(1) = max. (analysis/ has its own implementation for the study tables.)
#include <span>
#include <vector>

namespace canaries {

/// Type-7 quantile of an ascending-sorted sample, p in [0, 1].
/// Throws std::invalid_argument when the sample is empty or p is outside [0, 1].
double quantile_type7_sorted(std::span<const double> sorted, double p);

/// Type-7 quantile of an unsorted sample (sorted copy). Same errors.
double quantile_type7(std::vector<double> sample, double p);

}  // namespace canaries
