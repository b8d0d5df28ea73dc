// The sensitivity section of `harness plan` (see plan_sensitivity.hpp).
#include "harness/campaign/plan_sensitivity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace harness::campaign {
namespace {

std::string ratio_text(const std::optional<double>& v) { return v ? fmt::format("{:.3g}", *v) : "-"; }

std::string tolerance_text(const analysis::DetectableChange& d) {
  std::string t;
  if (d.max_ratio) t += fmt::format("<= {:g}", *d.max_ratio);
  if (d.min_ratio) t += (t.empty() ? "" : ", ") + fmt::format(">= {:g}", *d.min_ratio);
  return t;
}

}  // namespace

std::pair<std::string, std::string> detectable_cells(const analysis::DetectableChange& d) {
  if (d.df < 1) return {"none", "none"};  // one pair per stratum: no interval (analysis/detectable.hpp)
  if (d.sigma && *d.sigma == 0) return {"any (sigma 0)", "any (sigma 0)"};
  std::string change, past;
  if (d.max_ratio || !d.min_ratio) change = ">= " + ratio_text(d.up_from_one);
  if (d.min_ratio) change += (change.empty() ? "" : " or ") + std::string("<= ") + ratio_text(d.down_from_one);
  if (d.above_tolerance) past = ">= " + ratio_text(d.above_tolerance);
  if (d.below_tolerance) past += (past.empty() ? "" : " or ") + std::string("<= ") + ratio_text(d.below_tolerance);
  return {change, past};
}

std::map<std::string, int> planned_pairs_per_stratum(const Schedule& s) {
  std::map<std::string, int> cases;
  for (const auto& k : s.cases) ++cases[k.vm + "/" + k.regime + "/" + k.configuration];
  for (auto& [name, n] : cases) n /= 2;
  return cases;
}

PlanSensitivity plan_sensitivity(const Campaign& c, const Schedule& s, const std::string& variance_db) {
  PlanSensitivity out;
  if (c.design != "ab-pairs" || c.tolerances.empty()) return out;
  const double level = analysis::comparison_level(c.regression_alpha, static_cast<int>(c.tolerances.size()));
  const auto planned = planned_pairs_per_stratum(s);
  int total = 0;
  for (const auto& [stratum, n] : planned) total += n;
  out.text = fmt::format("smallest detectable change at the planned {} pair(s) in {} stratum(a), intervals at {:g}%, "
                         "power {:g}% (analysis/detectable.hpp):\n",
                         total, planned.size(), level * 100, analysis::kDetectablePower * 100);
  if (variance_db.empty()) {
    out.text += "  cannot know: give a baseline or A/A DB (`harness plan FILE --variance-from DB`) whose pairs give "
                "the noise\n";
    return out;
  }
  out.metrics = analysis::detectable_changes(variance_db, c.tolerances, planned, level);
  out.text += fmt::format("  {:<18} {:>14} {:>11} {:>8} {:>12} {:>14} {:>16}\n", "metric", "planned pairs",
                          "noise pairs", "sigma", "tolerance", "change from 1", "past tolerance");
  std::vector<std::string> insensitive;
  for (const auto& d : out.metrics) {
    if (!d.sigma) {
      out.text += fmt::format("  {:<18} cannot know: {}\n", d.metric, d.why_unknown);
      continue;
    }
    const auto [change, past] = detectable_cells(d);
    out.text += fmt::format("  {:<18} {:>14} {:>11} {:>8.3g} {:>12} {:>14} {:>16}{}\n", d.metric,
                            fmt::format("{} in {}", d.planned_pairs, d.planned_strata), d.variance_pairs, *d.sigma,
                            tolerance_text(d), change, past, d.insensitive ? "  INSENSITIVE" : "");
    if (d.insensitive)
      insensitive.push_back(d.df < 1 ? fmt::format("{} (one pair per stratum decides nothing, tolerance {})", d.metric,
                                                   tolerance_text(d))
                                     : fmt::format("{} (detects {} at best, tolerance {})", d.metric, change,
                                                   tolerance_text(d)));
  }
  out.text += fmt::format("  (noise from the pairs of {}; planned pairs: those of the strata whose configurations "
                          "measure the metric there, as the check judges it)\n",
                          variance_db);
  if (std::any_of(out.metrics.begin(), out.metrics.end(), [](const auto& d) { return d.sigma && d.df < 1; }))
    out.text += "  none: one planned pair per stratum gives no interval, so no change can be decided (raise "
                "design.repeats)\n";
  if (std::any_of(out.metrics.begin(), out.metrics.end(), [](const auto& d) { return d.sigma && *d.sigma == 0 && d.df >= 1; }))
    out.text += "  any (sigma 0): the noise DB's pairs do not vary at all for that metric (a synthetic or "
                "constant DB?); measure the noise with a real A/A run\n";
  const bool none_known =
      std::none_of(out.metrics.begin(), out.metrics.end(), [](const auto& d) { return d.sigma.has_value(); });
  if (none_known && c.kind == "ci" && !c.regression_accept_insensitive) {
    out.refusal = c.file + ": --variance-from " + variance_db +
                  " gave the noise of no checked metric (is it an A/B or A/A DB of this campaign's design?): the "
                  "sensitivity cannot be judged. Give such a DB, or set regression.accept_insensitive: true to plan "
                  "without it\n";
    return out;
  }
  if (!insensitive.empty() && c.regression_accept_insensitive)
    out.text += fmt::format("  {} INSENSITIVE metric(s) accepted: regression.accept_insensitive: true\n",
                            insensitive.size());
  if (!insensitive.empty() && c.kind == "ci" && !c.regression_accept_insensitive) {
    out.refusal = c.file + ": fields design.repeats and regression.tolerances: the planned pairs cannot detect a "
                           "change as large as the tolerance of";
    for (std::size_t i = 0; i < insensitive.size(); ++i) out.refusal += (i ? "; " : " ") + insensitive[i];
    out.refusal += ". Plan more pairs (design.repeats), widen the tolerance, or set regression.accept_insensitive: "
                   "true to plan it anyway\n";
  }
  return out;
}

}  // namespace harness::campaign
