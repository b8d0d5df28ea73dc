#pragma once
// What is known about the coverage of the primary intervals at a design, for `harness plan`
// (before the run) and the report's design table (after it): the analytic figure
// (coverage.hpp) and, when the design is one the statistics test simulates
// (tests/statistics/analysis/test_coverage.cpp), the measured figure (coverage_sim.hpp).
#include "analysis/stats/coverage.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace analysis {

/// Measured coverage of one simulated design (coverage_sim.hpp; 2,000 datasets x B = 10,000).
/// The statistics test runs the same simulation and fails when these numbers are not what
/// the code measures, so they cannot go stale.
struct SimulatedCoverage {
  std::vector<std::pair<int, int>> design;  ///< (triplets per stratum, number of strata), descending
  std::string campaigns;                    ///< campaign files with this design
  double level = 0;                         ///< per-comparison level
  int datasets = 0, replicates = 0;
  std::uint64_t seed = 0;
  double plain_pooled = 0, corrected_pooled = 0;  ///< per comparison, mean of the four (independent errors)
  double plain_joint = 0, corrected_joint = 0;    ///< all four at once, independent errors
  double plain_joint_triplet = 0, corrected_joint_triplet = 0;  ///< all four at once, triplet-correlated errors
};

/// The simulated designs (measured numbers, see above).
const std::vector<SimulatedCoverage>& simulated_coverages();

/// The simulated entry for this design and level (level within 1e-9), or nullptr.
const SimulatedCoverage* simulated_coverage_for(const std::vector<int>& stratum_sizes, double level);

/// Lines for `harness plan`: analytic per-comparison and joint coverage of both intervals, a
/// WARNING line when the prespecified interval is expected below its nominal level (per
/// comparison or, for `comparisons` > 1, jointly below 1 - alpha), the measured figure when
/// the design was simulated, and how to simulate it (`simulating`: the caller prints the
/// simulation next, so the line says that instead). `unit`: the word for a block ("triplet", or
/// "block" for k != 3 arms; arms.hpp block_word). Errors as coverage.hpp.
std::string design_coverage_text(const std::vector<int>& stratum_sizes, double level, int comparisons = 4,
                                 const std::string& unit = "triplet", bool simulating = false);

}  // namespace analysis
