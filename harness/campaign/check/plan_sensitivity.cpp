// The sensitivity section of `harness plan` (see plan_sensitivity.hpp).
#include "harness/campaign/check/plan_sensitivity.hpp"

#include "analysis/data/ab_pairs.hpp"
#include "harness/campaign/store/campaign_db.hpp"

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

/// The design of the campaign stored in `db_path` ("" when it holds none that parses).
std::string stored_design(const std::string& db_path) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  if (!has_plan(db)) return "";
  try {
    const Campaign theirs = stored_campaign(db, db_path);
    return theirs.design + " (campaign " + theirs.name + ")";
  } catch (const std::exception&) {
    return "";  // no stored campaign to name: the pairs below decide whether the DB gives noise
  }
}

/// The wrong_db refusal when `variance_db` cannot give the noise of any metric of `c`: its
/// stored campaign is not ab-pairs, or its pairs give no toleranced metric a sigma.
std::optional<SensitivityRefusal> wrong_db(const std::string& variance_db, const std::string& design,
                                           const std::vector<analysis::DetectableChange>& metrics) {
  const std::string need = "Give the DB of a finished A/A or A/B run of this campaign's design (design.kind ab-pairs; "
                           "`harness check` of an A/A copy, `design.aa: true`, writes one), or plan without "
                           "--variance-from\n";
  if (!design.empty() && design.rfind("ab-pairs ", 0) != 0)
    return SensitivityRefusal{SensitivityRefusal::Kind::wrong_db,
                              "--variance-from " + variance_db + " is a campaign DB of design " + design +
                                  ", not of an A/B campaign: it holds no (baseline, candidate) pairs, so it gives no "
                                  "noise to judge the design with. " + need};
  if (std::any_of(metrics.begin(), metrics.end(), [](const auto& d) { return d.sigma.has_value(); })) return std::nullopt;
  return SensitivityRefusal{SensitivityRefusal::Kind::wrong_db,
                            fmt::format("--variance-from {} gives the noise of none of this campaign's {} metric(s) "
                                        "with a tolerance (\"cannot know\" above says why for each): it is no DB of a "
                                        "finished A/A or A/B run of this design. {}",
                                        variance_db, metrics.size(), need)};
}

}  // namespace

namespace {

/// "needs design.repeats >= R (N pairs in all)" for a refusal.
std::string needs_text(const analysis::RepeatsNeeded& n, int strata) {
  using O = analysis::RepeatsNeeded::Outcome;
  if (n.outcome == O::unknown) return "the pairs it needs cannot be known";
  const long long pairs = static_cast<long long>(n.repeats) * strata;
  if (n.outcome == O::beyond_cap) return fmt::format("not even design.repeats {} ({} pairs in all) detects it", n.repeats, pairs);
  return fmt::format("needs design.repeats >= {} ({} pairs in all)", n.repeats, pairs);
}

}  // namespace

std::string needed_cell(const analysis::RepeatsNeeded& n, int strata) {
  using O = analysis::RepeatsNeeded::Outcome;
  if (n.outcome == O::unknown) return "-";
  const long long pairs = static_cast<long long>(n.repeats) * strata;
  return fmt::format("{}{} (repeats {})", n.outcome == O::beyond_cap ? "> " : "", pairs, n.repeats);
}

std::pair<std::string, std::string> detectable_cells(const analysis::DetectableChange& d) {
  if (d.df < 1) return {"none", "none"};  // one pair per stratum: no interval (analysis/stats/detectable.hpp)
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

namespace {

/// The table of `out.metrics` (with `out.needed`) into out.text; the metrics that cannot
/// detect a change as large as their tolerance, described for the refusal.
std::vector<std::string> sensitivity_table(PlanSensitivity& out, int strata, const std::string& variance_db) {
  out.text += fmt::format("  {:<18} {:>14} {:>11} {:>8} {:>12} {:>14} {:>16} {:>22}\n", "metric", "planned pairs",
                          "noise pairs", "sigma", "tolerance", "change from 1", "past tolerance", "tolerance needs");
  std::vector<std::string> insensitive;
  for (std::size_t i = 0; i < out.metrics.size(); ++i) {
    const auto& d = out.metrics[i];
    if (!d.sigma) {
      out.text += fmt::format("  {:<18} cannot know: {}\n", d.metric, d.why_unknown);
      continue;
    }
    const auto [change, past] = detectable_cells(d);
    const std::string needs = needed_cell(out.needed[i], strata);
    out.text += fmt::format("  {:<18} {:>14} {:>11} {:>8.3g} {:>12} {:>14} {:>16} {:>22}{}\n", d.metric,
                            fmt::format("{} in {}", d.planned_pairs, d.planned_strata), d.variance_pairs, *d.sigma,
                            tolerance_text(d), change, past, needs, d.insensitive ? "  INSENSITIVE" : "");
    if (d.insensitive)
      insensitive.push_back(fmt::format("{} ({}, tolerance {}; {})", d.metric,
                                        d.df < 1 ? std::string("one pair per stratum decides nothing")
                                                 : "detects " + change + " at best",
                                        tolerance_text(d), needs_text(out.needed[i], strata)));
  }
  out.text += fmt::format("  (noise from the pairs of {}; planned pairs: those of the strata whose configurations "
                          "measure the metric there, as the check judges it; tolerance needs: the pairs in all, and "
                          "design.repeats, at which a change as large as the tolerance is detected from 1 with the "
                          "power above)\n",
                          variance_db);
  return insensitive;
}

/// The closing lines: what none and sigma 0 mean, and the design.repeats every tolerance needs.
void sensitivity_notes(PlanSensitivity& out, const Campaign& c, int strata) {
  if (std::any_of(out.metrics.begin(), out.metrics.end(), [](const auto& d) { return d.sigma && d.df < 1; }))
    out.text += "  none: one planned pair per stratum gives no interval, so no change can be decided (raise "
                "design.repeats)\n";
  if (std::any_of(out.metrics.begin(), out.metrics.end(), [](const auto& d) { return d.sigma && *d.sigma == 0 && d.df >= 1; }))
    out.text += "  any (sigma 0): the noise DB's pairs do not vary at all for that metric (a synthetic or "
                "constant DB?); measure the noise with a real A/A run\n";
  int most = 0;
  bool capped = false;
  for (const auto& n : out.needed) {
    if (n.outcome == analysis::RepeatsNeeded::Outcome::unknown) continue;
    capped = capped || n.outcome == analysis::RepeatsNeeded::Outcome::beyond_cap;
    most = std::max(most, n.repeats);
  }
  if (most > c.repeats)
    out.text += fmt::format("  every tolerance detectable: design.repeats: {}{} ({}{} pairs in all; planned: {}, {} pairs)\n",
                            capped ? "more than " : "", most, capped ? "more than " : "",
                            static_cast<long long>(most) * strata, c.repeats, c.repeats * strata);
}

}  // namespace

PlanSensitivity plan_sensitivity(const Campaign& c, const Schedule& s, const std::string& variance_db) {
  PlanSensitivity out;
  if (c.design != "ab-pairs" || c.tolerances.empty()) return out;
  const double level = analysis::comparison_level(c.regression_alpha, static_cast<int>(c.tolerances.size()));
  const auto planned = planned_pairs_per_stratum(s);
  int total = 0;
  for (const auto& [stratum, n] : planned) total += n;
  const int strata = static_cast<int>(planned.size());
  out.text = fmt::format("smallest detectable change at the planned {} pair(s) in {} stratum(a), intervals at {:g}%, "
                         "power {:g}% (analysis/stats/detectable.hpp):\n",
                         total, strata, level * 100, analysis::kDetectablePower * 100);
  if (variance_db.empty()) {
    out.text += "  cannot know: give a baseline or A/A DB (`harness plan FILE --variance-from DB`) whose pairs give "
                "the noise\n";
    return out;
  }
  const std::string design = stored_design(variance_db);
  if (!design.empty() && design.rfind("ab-pairs ", 0) != 0) {
    out.text += "  cannot know: --variance-from " + variance_db + " is no A/B campaign DB\n";
    out.refusal = wrong_db(variance_db, design, out.metrics);
    return out;
  }
  out.metrics = analysis::detectable_changes(analysis::regression_metrics(),
                                             analysis::paired_values(variance_db, variance_db), variance_db,
                                             c.tolerances, planned, level);
  for (const auto& d : out.metrics)
    out.needed.push_back(analysis::repeats_needed(d.max_ratio, d.min_ratio, d.sigma, d.planned_strata, level));
  const auto insensitive = sensitivity_table(out, strata, variance_db);
  sensitivity_notes(out, c, strata);
  if ((out.refusal = wrong_db(variance_db, design, out.metrics))) return out;
  if (!insensitive.empty() && c.regression_accept_insensitive)
    out.text += fmt::format("  {} INSENSITIVE metric(s) accepted: regression.accept_insensitive: true\n",
                            insensitive.size());
  if (!insensitive.empty() && c.kind == "ci" && !c.regression_accept_insensitive) {
    std::string why = c.file + ": fields design.repeats and regression.tolerances: the planned pairs cannot detect a "
                               "change as large as the tolerance of";
    for (std::size_t i = 0; i < insensitive.size(); ++i) why += (i ? "; " : " ") + insensitive[i];
    why += ". Plan more pairs (design.repeats), widen the tolerance, or set regression.accept_insensitive: true to "
           "plan it anyway\n";
    out.refusal = SensitivityRefusal{SensitivityRefusal::Kind::insensitive, why};
  }
  return out;
}

}  // namespace harness::campaign
