#pragma once
// The study's predefined decision rule (study; analysis/README.md), applied to the declared family
// of comparisons (the study's four by default; analysis/data/arms.hpp):
//   general benefit  iff every upper bound < 1 AND every point estimate <= 0.95
//   harm (per comparison) iff its interval lies wholly above 1 (lower bound > 1).
// Applied to the prespecified (plain percentile, 1 - alpha/m: 98.75% for the study) intervals only.
// A family of several treatments gets one verdict per treatment (decide_by_treatment), never
// one over the family.
#include <array>
#include <functional>
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
  std::vector<std::string> failed;      ///< which benefit criteria failed, e.g. "sqlite: bounded-reclaim / static-zram: upper bound 1.020 >= 1"
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
/// The prespecified verdicts of a family that names two or more treatments (ours; docs/PROTOCOL.md
/// "Verdict of a family with several treatments"): the study's rule is about one treatment, so it
/// is applied to each treatment's own comparisons of
/// the family, one Verdict per treatment, in the order the family first names it, on the
/// family's intervals (1 - alpha/m, m = the whole family). No verdict spans two treatments.
/// Empty when the family names one treatment (its verdict is decide() over the family).
/// `treatments[j]` is the treatment of `c[j]` (same size; std::invalid_argument otherwise).
/// `family_of(t, n)`: the words naming treatment t's n comparisons in its verdict's text ("" =
/// the study's own words, for a treatment whose comparisons are exactly the study's four).
std::vector<std::pair<std::string, Verdict>> decide_by_treatment(
    const std::vector<RatioInterval>& c, const std::vector<std::string>& treatments,
    const std::function<std::string(const std::string& treatment, const std::vector<std::size_t>& own)>& family_of,
    double max_estimate = 0.95);

/// The family's Verdict when the verdicts are per treatment (decide_by_treatment not empty): no
/// benefit judgement of its own (general_benefit false, failed empty), harm = every treatment's
/// harmed comparisons in `by_treatment`'s order (each label names its treatment), and a text
/// that says the verdicts are per treatment, at which level (`level`, 1 - `alpha`/`m`) and for
/// which treatments. Never claims or denies a benefit over the family.
Verdict per_treatment_verdict(const std::vector<std::pair<std::string, Verdict>>& by_treatment, double level,
                              double alpha, int m);

template <std::size_t N>
Verdict decide(const std::array<RatioInterval, N>& c, double max_estimate = 0.95, const std::string& family = "") {
  return decide(std::vector<RatioInterval>(c.begin(), c.end()), max_estimate, family);
}

}  // namespace analysis
