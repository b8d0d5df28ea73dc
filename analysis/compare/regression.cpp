// A/B regression comparison (see regression.hpp).
#include "analysis/compare/regression.hpp"

#include "analysis/stats/bootstrap.hpp"

#include <map>
#include <stdexcept>

namespace analysis {

std::vector<MetricComparison> compare_variants(const std::string& baseline_db, const std::string& candidate_db,
                                               const RegressionDesign& d, const ComparisonRule& rule) {
  if (d.design != "ab-pairs")
    throw std::runtime_error(d.file + ": design.kind is " + d.design + ", not ab-pairs: no variants to compare");
  if (rule.looks < 1) throw std::invalid_argument("compare_variants: looks must be >= 1");
  const auto& metrics = regression_metrics();
  std::map<std::string, const MetricTolerance*> tol;
  for (const auto& t : d.tolerances) {
    bool known = false;
    for (const auto& m : metrics) known = known || t.metric == m.name;
    if (!known) throw std::runtime_error(d.file + ": regression.tolerances." + t.metric + ": not a regression metric");
    tol[t.metric] = &t;
  }
  const double level = comparison_level(d.alpha, static_cast<int>(tol.size()), rule.looks);
  const auto pairs = paired_values(baseline_db, candidate_db);
  BootstrapOptions bo;
  bo.replicates = d.bootstrap_replicates;
  bo.seed = d.seed;
  std::vector<MetricComparison> out;
  for (const auto& m : metrics) {
    std::optional<double> max_ratio, min_ratio;
    if (const auto t = tol.find(m.name); t != tol.end()) {
      max_ratio = t->second->max_ratio;
      min_ratio = t->second->min_ratio;
    }
    out.push_back(compare_pairs(m, pairs.at(m.name), max_ratio, min_ratio, level, bo, rule.verdicts));
  }
  return out;
}

}  // namespace analysis
