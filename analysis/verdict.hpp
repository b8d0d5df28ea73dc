#pragma once
// The study's predefined decision rule (study; analysis/README.md), applied to the declared family
// of comparisons (the study's four by default; analysis/arms.hpp):
//   general benefit  iff every upper bound < 1 AND every point estimate <= 0.95
//   harm (per comparison) iff its interval lies wholly above 1 (lower bound > 1).
// Applied to the prespecified (plain percentile, 1 - alpha/m: 98.75% for the study) intervals only.
#include <array>
#include <string>
#include <utility>
#include <vector>

namespace analysis {

/// One comparison's ratio estimate and interval (ratio scale, < 1 favours bounded reclaim).
struct RatioInterval {
  std::string label;
  double estimate = 1, lower = 1, upper = 1;
};

/// The verdict and, in words, why.
struct Verdict {
  bool assessable = true;               ///< false: no resampling variability (every stratum has one triplet)
  bool general_benefit = false;
  std::vector<std::string> harm;        ///< labels of comparisons with lower bound > 1
  std::vector<std::string> failed;      ///< which benefit criteria failed, e.g. "sqlite: reclaim / static upper bound 1.020 >= 1"
  std::string text;                     ///< one paragraph for the report
};

/// The verdict when the intervals carry no information (PROTOCOL.md assumption, analysis/README.md):
/// every (vm, regime) stratum has one triplet, so every bootstrap replicate equals the estimate and
/// the intervals have zero width. Neither benefit nor harm is claimed from zero-width intervals.
/// `unit`: the word for a block in the text ("triplet", or "block" for k != 3 arms; block_word).
Verdict not_assessable(int strata, const std::string& unit = "triplet");

/// Smallest B with at least 10 bootstrap replicates in each tail at the simultaneous level:
/// alpha / (2 m) x B >= 10, i.e. B >= 20 m / alpha (1600 at alpha 0.05, m 4). PROTOCOL.md assumption.
int minimum_replicates(double alpha, int m);

/// Applies the rule. `max_estimate` = 0.95 (a reduction of at least 5%), `bound` = 1. `family`
/// names the family judged in the text ("the declared family of m comparisons (...)",
/// family_text); empty = the study's four (the text says "the predefined all-four rule").
Verdict decide(const std::vector<RatioInterval>& c, double max_estimate = 0.95, const std::string& family = "");
/// The same rule over each treatment's own comparisons of the family, one entry per treatment in
/// the order the family first names it, when the family names two or more treatments (else
/// empty). Descriptive, beside the family's verdict, which alone is the prespecified one: an arm
/// that no preregistration singled out does not get a verdict of its own, yet a reader sees which
/// treatment carried the family's failure or harm. The intervals are the family's (1 - alpha/m).
/// `treatments[j]` is the treatment of `c[j]` (same size; std::invalid_argument otherwise).
std::vector<std::pair<std::string, Verdict>> decide_by_treatment(const std::vector<RatioInterval>& c,
                                                                 const std::vector<std::string>& treatments,
                                                                 double max_estimate = 0.95);

template <std::size_t N>
Verdict decide(const std::array<RatioInterval, N>& c, double max_estimate = 0.95, const std::string& family = "") {
  return decide(std::vector<RatioInterval>(c.begin(), c.end()), max_estimate, family);
}

}  // namespace analysis
