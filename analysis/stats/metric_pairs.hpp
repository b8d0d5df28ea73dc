#pragma once
// The shapes of a paired comparison (ours; the A/B design, analysis/compare/regression.hpp): one
// metric (its name, unit and a line for reports) and its pairs (baseline, candidate), each with
// its stratum and repeat. The statistics of the pairs (stats/paired_ratio.hpp,
// stats/ratio_interval.hpp) and their reading from a campaign DB (data/ab_pairs.hpp) share them.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace analysis {

/// One metric of the comparison (fixed set and order; names are the campaign file's
/// regression.tolerances keys).
struct RegressionMetric {
  const char* name;   ///< e.g. "reclaim_duration"
  const char* unit;   ///< "s", "ratio", "count", "KiB", "ms"
  const char* what;   ///< one line for reports
};

/// The pairs of one metric: (baseline, candidate) values in the metric's unit, each with its
/// stratum "vm/regime/configuration" and the pair's repeat number (design.repeats index).
struct MetricPairs {
  std::vector<std::array<double, 2>> rows;
  std::vector<std::string> stratum;
  std::vector<std::int64_t> repeat;
};

}  // namespace analysis
