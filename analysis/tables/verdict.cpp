// Predefined decision rule (see verdict.hpp).
#include "analysis/tables/verdict.hpp"

#include "harness/text/join.hpp"

#include <stdexcept>

#include <algorithm>

#include <fmt/format.h>

#include <cmath>

namespace analysis {

Verdict not_assessable(int strata, const std::string& unit) {
  Verdict v;
  v.assessable = false;
  v.text = fmt::format(
      "NOT ASSESSABLE (no resampling variability): each of the {} (vm, regime) strata has one matched {}, so "
      "every bootstrap replicate equals the estimate and the intervals have zero width. The predefined rule is not "
      "applied: neither a benefit nor harm is claimed.",
      strata, unit);
  return v;
}

int minimum_replicates(double alpha, int m) {
  return static_cast<int>(std::ceil(20.0 * m / alpha - 1e-9));
}

Verdict decide(const std::vector<RatioInterval>& c, double max_estimate, const std::string& family) {
  Verdict v;
  for (const auto& x : c) {
    if (!(x.upper < 1.0)) v.failed.push_back(fmt::format("{}: upper bound {:.3f} >= 1", x.label, x.upper));
    if (!(x.estimate <= max_estimate))
      v.failed.push_back(fmt::format("{}: estimate {:.3f} > {:.2f} (less than a {:.0f}% reduction)", x.label,
                                     x.estimate, max_estimate, (1.0 - max_estimate) * 100.0));
    if (x.lower > 1.0) v.harm.push_back(x.label);
  }
  v.general_benefit = v.failed.empty();
  // The study's four: its own words. Any other family: the rule applied to it, named.
  const bool study = family.empty() && c.size() == 4;
  const std::string fam = family.empty() ? fmt::format("the declared family of {} comparisons", c.size()) : family;
  std::string s =
      study ? (v.general_benefit ? "GENERAL RESPONSIVENESS BENEFIT: all four upper bounds are below 1 and all four "
                                   "estimates show at least a 5% reduction."
                                 : "NO GENERAL RESPONSIVENESS BENEFIT by the predefined all-four rule. Failed: ")
            : (v.general_benefit
                   ? fmt::format("GENERAL RESPONSIVENESS BENEFIT by the predefined rule applied to {}: every upper "
                                 "bound is below 1 and every estimate shows at least a 5% reduction.",
                                 fam)
                   : fmt::format("NO GENERAL RESPONSIVENESS BENEFIT by the predefined rule (every upper bound < 1 "
                                 "and every estimate <= 0.95) applied to {}. Failed: ",
                                 fam));
  if (!v.general_benefit) {
    s += harness::text::join(v.failed, "; ");
    s += ".";
  }
  if (v.harm.empty()) {
    s += " No harm detected (no interval lies wholly above 1).";
  } else {
    s += " HARM detected for: ";
    s += harness::text::join(v.harm);
    s += " (interval wholly above 1).";
  }
  v.text = s;
  return v;
}

std::vector<std::pair<std::string, Verdict>> decide_by_treatment(
    const std::vector<RatioInterval>& c, const std::vector<std::string>& treatments,
    const std::function<std::string(const std::string& treatment, const std::vector<std::size_t>& own)>& family_of,
    double max_estimate) {
  if (c.size() != treatments.size())
    throw std::invalid_argument("decide_by_treatment: one treatment per comparison expected");
  std::vector<std::string> order;
  for (const auto& t : treatments)
    if (std::find(order.begin(), order.end(), t) == order.end()) order.push_back(t);
  std::vector<std::pair<std::string, Verdict>> out;
  if (order.size() < 2) return out;
  for (const auto& t : order) {
    std::vector<RatioInterval> own;
    std::vector<std::size_t> at;
    for (std::size_t j = 0; j < c.size(); ++j)
      if (treatments[j] == t) {
        own.push_back(c[j]);
        at.push_back(j);
      }
    out.emplace_back(t, decide(own, max_estimate, family_of(t, at)));
  }
  return out;
}

Verdict per_treatment_verdict(const std::vector<std::pair<std::string, Verdict>>& by_treatment, double level,
                              double alpha, int m) {
  Verdict v;
  std::vector<std::string> names;
  for (const auto& [t, tv] : by_treatment) {
    names.push_back(t);
    v.harm.insert(v.harm.end(), tv.harm.begin(), tv.harm.end());
  }
  v.text = fmt::format(
      "ONE VERDICT PER TREATMENT: the declared family names {} treatments ({}); the predefined rule (every upper "
      "bound < 1 and every estimate <= 0.95; harm: an interval wholly above 1) is applied to each treatment's own "
      "comparisons, on the family's {:.6g}% intervals (1 - {}/{}). No verdict is given over the family.",
      names.size(), harness::text::join(names), level * 100, alpha, m);
  return v;
}

}  // namespace analysis
