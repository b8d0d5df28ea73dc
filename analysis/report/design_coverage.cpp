// Design and expected coverage in the report (see design_coverage.hpp).
#include "analysis/report/design_coverage.hpp"

#include "analysis/simulate/coverage_report.hpp"
#include "analysis/stats/coverage.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace analysis {

Table design_table(const PrimaryResult& pr, const TripletSet& ts) {
  Table t{"design_coverage", "Design and expected coverage of the intervals",
          {{"quantity", 0}, {"value", 4}}, {}, {}};
  std::vector<int> n = pr.stratum_sizes;
  std::sort(n.begin(), n.end());
  const auto& d = pr.coverage;
  t.add({"strata (vm, regime)", static_cast<int>(n.size())});
  const std::string& u = ts.unit;
  t.add({u + "s", static_cast<int>(ts.triplets.size())});
  t.add({"design", design_text(n)});
  t.add({u + "s per stratum (min / median / max)", fmt::format("{} / {} / {}", n.front(), n[n.size() / 2], n.back())});
  t.add({"strata with one " + u, static_cast<int>(std::count(n.begin(), n.end(), 1))});
  t.add({"nominal level per comparison", num(pr.level)});
  t.add({"bootstrap variance factor f / degrees of freedom, prespecified", fmt::format("{:.4f} / {:.1f}", d.variance_factor, d.df)});
  t.add({"expected coverage per comparison, prespecified interval (analytic)", num(d.per_comparison)});
  t.add({"expected coverage per comparison, corrected interval (analytic)", num(d.corrected_per_comparison)});
  t.add({fmt::format("joint coverage of all {}, lower bound (analytic), prespecified", pr.m), num(d.joint)});
  t.add({fmt::format("joint coverage of all {}, lower bound (analytic), corrected", pr.m), num(d.corrected_joint)});
  if (const auto* m = simulated_coverage_for(pr.stratum_sizes, pr.level)) {
    t.add({"measured coverage per comparison, prespecified (simulation)", num(m->plain_pooled)});
    t.add({"measured coverage per comparison, corrected (simulation)", num(m->corrected_pooled)});
    t.add({"measured joint coverage, prespecified (simulation; triplet-correlated errors)",
           fmt::format("{:.4f} ({:.4f})", m->plain_joint, m->plain_joint_triplet)});
    t.add({"measured joint coverage, corrected (simulation; triplet-correlated errors)",
           fmt::format("{:.4f} ({:.4f})", m->corrected_joint, m->corrected_joint_triplet)});
    t.notes.push_back(fmt::format(
        "Measured coverage: this design ({}) is simulated by tests/statistics/analysis ({}): {} synthetic datasets with "
        "known truth x B = {}, seed {}, through the same estimator and percentile interval (analysis/simulate/coverage_sim.hpp).",
        design_text(n), m->campaigns, m->datasets, m->replicates, m->seed));
  } else {
    t.add({"measured coverage (simulation)", "not simulated for this design: harness plan FILE --simulate-coverage"});
  }
  t.notes.push_back(
      "Expected coverage is ANALYTIC (analysis/stats/coverage.hpp): a resampled mean of n units has variance (n-1)/n of the "
      "true one; with equal within-stratum variances the bootstrap variance factor is f = sum (n_s-1)/n_s^2 / sum "
      "1/n_s, estimated on Satterthwaite's degrees of freedom df; the percentile reaches z' = z + g/24 (z^3 - 3z) for the bootstrap distribution's excess kurtosis g (light tails of small strata), and coverage = 2 F_t(z' sqrt(f); df) - 1. The joint "
      "bound is the product of the per-comparison figures (Sidak; equal to it for independent comparisons).");
  return t;
}

void design_cautions(const PrimaryResult& pr, const TripletSet& ts, Report& r) {
  const int singles = static_cast<int>(std::count(pr.stratum_sizes.begin(), pr.stratum_sizes.end(), 1));
  if (singles > 0 && singles < static_cast<int>(pr.stratum_sizes.size()))
    r.summary.push_back(fmt::format(
        "Strata differ in size ({} of {} strata have one {}); strata keep equal weight in the estimate (study).",
        singles, pr.stratum_sizes.size(), ts.unit));
  if (pr.expected_coverage < pr.level - 0.005) {
    const auto* m = simulated_coverage_for(pr.stratum_sizes, pr.level);
    r.warnings.push_back(fmt::format(
        "Small-sample caution: with this design ({}) the prespecified {:.2f}% intervals are expected to cover only "
        "about {:.1f}% per comparison and all {} together at least {:.1f}% (analytic){}; the corrected secondary "
        "interval is expected to cover about {:.1f}% (design table; docs/PROTOCOL.md \"Design\").",
        design_text(pr.stratum_sizes), pr.level * 100, pr.expected_coverage * 100, pr.m, pr.coverage.joint * 100,
        m ? fmt::format("; measured by simulation at this design: {:.1f}% per comparison, {:.1f}% jointly",
                        m->plain_pooled * 100, m->plain_joint * 100)
          : std::string(),
        pr.expected_coverage_corrected * 100));
  }
}

}  // namespace analysis
