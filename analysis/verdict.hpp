#pragma once
// The study's predefined decision rule (study; DESIGN.md "Analysis"):
//   general benefit  iff all four upper bounds < 1 AND all four point estimates <= 0.95
//   harm (per comparison) iff its interval lies wholly above 1 (lower bound > 1).
// Applied to the prespecified (plain percentile, 98.75%) intervals only.
#include <array>
#include <string>
#include <vector>

namespace analysis {

/// One comparison's ratio estimate and interval (ratio scale, < 1 favours bounded reclaim).
struct RatioInterval {
  std::string label;
  double estimate = 1, lower = 1, upper = 1;
};

/// The verdict and, in words, why.
struct Verdict {
  bool general_benefit = false;
  std::vector<std::string> harm;        ///< labels of comparisons with lower bound > 1
  std::vector<std::string> failed;      ///< which benefit criteria failed, e.g. "sqlite: reclaim / static upper bound 1.020 >= 1"
  std::string text;                     ///< one paragraph for the report
};

/// Applies the rule. `max_estimate` = 0.95 (a reduction of at least 5%), `bound` = 1.
Verdict decide(const std::array<RatioInterval, 4>& c, double max_estimate = 0.95);

}  // namespace analysis
