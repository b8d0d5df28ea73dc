#pragma once
// The family a campaign's coverage is simulated for (`harness plan --simulate-coverage`,
// analysis/simulate/coverage_sim.hpp): its arms in block order and its declared comparisons.
#include "analysis/simulate/coverage_sim.hpp"
#include "harness/campaign/model/campaign.hpp"

namespace harness::campaign {

/// Campaign `c`'s family for the coverage simulation: k = c.arms.size() arms in c.arms's order
/// (one case each per matched block) and c.comparisons (m, canonical spelling, their order; the
/// study's four when none is declared). The truth is analysis::sim_family's: the study's Table 4
/// estimate for one of the study's four comparisons, 1 for any other. Errors:
/// std::invalid_argument for a comparison that does not parse or names an arm `c` does not run
/// (load_campaign refuses both before: a campaign built by hand).
analysis::SimFamily coverage_family(const Campaign& c);

}  // namespace harness::campaign
