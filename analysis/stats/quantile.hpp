#pragma once
// Sample quantiles, Hyndman & Fan type 7 (numpy.quantile's default "linear").
// Source of the rule: analysis/README.md (per-case p99 is type 7).
#include <span>
#include <vector>

namespace analysis {

/// Type-7 quantile of `sorted` (ascending; may end in +inf values) at probability p in [0, 1].
/// h = (n - 1) p, lo = floor(h); result = x[lo] + (h - lo) (x[lo+1] - x[lo]).
/// When the interpolation weight is 0 only x[lo] is used, so a +inf beyond the chosen
/// order statistic never leaks in; when it is > 0 and x[lo+1] is +inf the result is +inf.
/// Units: those of the input. Errors: std::invalid_argument for empty input, p outside [0, 1]
/// or a NaN in the data.
double quantile7_sorted(std::span<const double> sorted, double p);

/// Same as quantile7_sorted, on unsorted data (copied and sorted).
double quantile7(std::span<const double> values, double p);

/// Same value as quantile7_sorted of the sorted `values`, by selection (std::nth_element and
/// one minimum, O(n)) instead of a sort; reorders `values`. Same errors.
double quantile7_select(std::vector<double>& values, double p);

/// Whether the type-7 interval [quantile7(values, p_lo), quantile7(values, p_hi)] contains t
/// (both ends inclusive), decided in one pass without sorting or copying: the same answer as
/// computing the two quantiles (the order statistics next to t enter the same interpolation).
/// For coverage counting over many intervals. Same errors as quantile7_sorted, and
/// std::invalid_argument when p_lo > p_hi.
bool quantile7_interval_contains(std::span<const double> values, double p_lo, double p_hi, double t);

/// Several probabilities at once (one sort). Output has probs.size() entries.
std::vector<double> quantiles7(std::span<const double> values, std::span<const double> probs);

/// Median (type 7, p = 0.5) of values; std::invalid_argument when empty.
double median(std::span<const double> values);

}  // namespace analysis
