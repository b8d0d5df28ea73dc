// Coverage known at a design (see coverage_report.hpp).
#include "analysis/simulate/coverage_report.hpp"

#include "analysis/stats/coverage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace analysis {

const std::vector<SimulatedCoverage>& simulated_coverages() {
  // Measured with simulate_coverage (seed 1, 2,000 datasets x B = 10,000, level 0.9875); the
  // statistics test re-measures each entry and fails when a number differs.
  static const std::vector<SimulatedCoverage> v{
      // design, campaigns, level, datasets, B, seed, plain pooled, corrected pooled, plain joint,
      // corrected joint, plain joint (triplet errors), corrected joint (triplet errors)
      {{{2, 24}, {1, 12}}, "campaigns/confirmatory.yaml (vm0..vm8, 15 triplets per regime)", 0.9875, 2000, 10000, 1,
       0.76025, 0.896375, 0.3225, 0.6395, 0.3700, 0.6905},
      {{{3, 20}}, "campaigns/confirmatory-5vm.yaml (5 VMs x 4 regimes x 3 repeats)", 0.9875, 2000, 10000, 1, 0.944375,
       0.98125, 0.7925, 0.9260, 0.8245, 0.9300},
  };
  return v;
}

const SimulatedCoverage* simulated_coverage_for(const std::vector<int>& n, double level) {
  const auto d = design_of(n);
  for (const auto& s : simulated_coverages())
    if (s.design == d && std::fabs(s.level - level) < 1e-9) return &s;
  return nullptr;
}

std::string design_coverage_text(const std::vector<int>& n, double level, int comparisons, const std::string& unit,
                                 bool simulating) {
  const DesignCoverage d = expected_design_coverage(n, level, comparisons);
  const double family = 1 - (1 - level) * comparisons;  // the family-wise target (study: 0.95)
  const int singles = static_cast<int>(std::count(n.begin(), n.end(), 1));
  std::string s = fmt::format(
      "expected coverage of the primary intervals at this design ({}; analytic, analysis/stats/coverage.hpp: equal "
      "within-stratum variances, normal errors):\n"
      "  prespecified {:.2f}% interval: {:.3f} per comparison (variance factor {:.3f}, {:.0f} df); all {} jointly "
      ">= {:.3f} (target {:.2f})\n"
      "  corrected interval (secondary): {:.3f} per comparison (variance factor {:.3f}, {:.0f} df); all {} jointly "
      ">= {:.3f}\n",
      design_text(n), level * 100, d.per_comparison, d.variance_factor, d.df, comparisons, d.joint, family,
      d.corrected_per_comparison, d.corrected_variance_factor, d.corrected_df, comparisons, d.corrected_joint);
  if (d.per_comparison < level - 0.005 || (comparisons > 1 && d.joint < family - 0.005))
    s += fmt::format(
        "WARNING: below the nominal level: the prespecified {:.2f}% intervals are expected to cover {:.1f}% per "
        "comparison and all {} together at least {:.1f}% (target {:.0f}%){}; the corrected interval is expected to "
        "cover {:.1f}% per comparison. More {}s per stratum (design.repeats, or fewer VMs) raise it.\n",
        level * 100, d.per_comparison * 100, comparisons, d.joint * 100, family * 100,
        singles ? fmt::format("; {} of {} strata have one {} and no resampling variability", singles, n.size(), unit)
                : std::string(),
        d.corrected_per_comparison * 100, unit);
  if (const auto* m = simulated_coverage_for(n, level))
    s += fmt::format(
        "  measured by simulation (tests/statistics/analysis, {} datasets x B = {}, seed {}): prespecified {:.3f} "
        "per comparison, {:.3f} jointly ({:.3f} with triplet-correlated errors); corrected {:.3f} per comparison, "
        "{:.3f} jointly ({:.3f})\n",
        m->datasets, m->replicates, m->seed, m->plain_pooled, m->plain_joint, m->plain_joint_triplet,
        m->corrected_pooled, m->corrected_joint, m->corrected_joint_triplet);
  else if (simulating)
    s += "  measured by simulation: below (--simulate-coverage)\n";
  else
    s += "  not simulated for this design: `harness plan FILE --simulate-coverage` measures it (2,000 datasets x "
         "B = 10,000)\n";
  return s;
}

}  // namespace analysis
