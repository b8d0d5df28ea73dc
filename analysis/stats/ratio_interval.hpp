#pragma once
// The delta-method Student-t interval of a ratio of stratified means (ours; used by the
// sequential check, analysis/stats/sequential.hpp, and the plan's smallest detectable change,
// analysis/stats/detectable.hpp, so that the plan predicts what the check will do).
//
// R = M_c / M_b, M_v the mean over strata of variant v's stratum means. Per pair,
// u = c / M_c - b / M_b is the linearisation of log R (delta method: van der Vaart,
// "Asymptotic Statistics", 1998, ch. 3): log R - log(true R) ~ mean over strata of the
// stratum means of u. sigma = the pooled within-stratum SD of u (df = pairs - strata), so
// SE(log R) = sigma * sqrt(sum_s 1 / n_s) / S, and the interval at `level` is
// R * exp(-/+ t_{df, 1 - (1 - level) / 2} * SE).
// Why not the percentile bootstrap here: with 6 pairs in a stratum and the extreme levels a
// split alpha needs (1 - 0.05 / 50), the bootstrap distribution's tails stop at the data's
// extremes and the interval undercovers: simulated, 11% false flags at a nominal 10%
// (tests/unit/analysis/test_sequential.cpp); the t interval keeps to it.
#include "analysis/stats/metric_pairs.hpp"

#include <optional>

namespace analysis {

/// The spread of a metric's pairs.
struct PairSpread {
  double sigma = 0;   ///< pooled within-stratum SD of u
  int df = 0;         ///< pairs - strata (strata with one pair add nothing)
  int pairs = 0;      ///< pairs in strata with two or more
  double mean_b = 0, mean_c = 0;  ///< stratified means M_b, M_c
};

/// The spread of `p`'s pairs; nullopt when no stratum holds two pairs or a stratified mean is
/// not > 0. Pure.
std::optional<PairSpread> pair_spread(const MetricPairs& p);

/// The ratio M_c / M_b and its delta-method t interval at `level` (see above); nullopt when
/// pair_spread is. std::invalid_argument when level is not in (0, 1). Pure.
struct DeltaTInterval {
  double ratio = 0, lower = 0, upper = 0, se_log = 0;
  int df = 0;
};
std::optional<DeltaTInterval> delta_t_interval(const MetricPairs& p, double level);

}  // namespace analysis
