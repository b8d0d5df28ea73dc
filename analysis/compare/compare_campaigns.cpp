// N campaigns lined up (see compare_campaigns.hpp).
#include "analysis/compare/compare_campaigns.hpp"

#include "analysis/compare/setting_differences.hpp"
#include "harness/text/join.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace analysis {
namespace {

using nlohmann::json;

/// The A/B table: every regression metric any campaign measured, in regression_metrics() order.
Table ab_table(const std::vector<CompareCampaign>& cs, const std::vector<std::string>& names) {
  Table t{"compare_ab", "A/B metrics side by side: candidate / baseline of each campaign (ratio of stratified means)",
          {{"metric", 0}, {"unit", 0}},
          {},
          {}};
  std::vector<std::string> tidy;
  for (const auto& n : names) tidy.push_back(tidy_name(n));
  t.side_names = names;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    t.columns.push_back({names[i] + " pairs", 0, tidy[i] + "_pairs", i, "pairs"});
    t.columns.push_back({names[i] + " ratio", 3, tidy[i] + "_ratio", i, "ratio"});
    t.columns.push_back({names[i] + " lower", 3, tidy[i] + "_ratio_lower", i, "lower"});
    t.columns.push_back({names[i] + " upper", 3, tidy[i] + "_ratio_upper", i, "upper"});
    t.columns.push_back({names[i] + " verdict", 0, tidy[i] + "_verdict", i, "verdict"});
  }
  for (std::size_t i = 1; i < cs.size(); ++i)
    t.columns.push_back({names[i] + " / " + names[0], 3, "ratio_" + tidy[i] + "_over_" + tidy[0], i, "/ " + names[0]});
  auto opt = [](const std::optional<double>& v) { return v ? num(*v) : json(nullptr); };
  for (const auto& metric : regression_metrics()) {
    std::vector<const MetricComparison*> got;
    for (const auto& c : cs) {
      const auto it = std::find_if(c.ab.begin(), c.ab.end(), [&](const MetricComparison& m) { return m.metric == metric.name; });
      got.push_back(it == c.ab.end() ? nullptr : &*it);
    }
    if (std::none_of(got.begin(), got.end(), [](const MetricComparison* m) { return m != nullptr; })) continue;
    std::vector<json> row{metric.name, metric.unit};
    for (const auto* m : got) {
      if (!m) {
        row.insert(row.end(), {nullptr, nullptr, nullptr, nullptr, nullptr});
        continue;
      }
      row.insert(row.end(), {m->pairs, opt(m->ratio), opt(m->lower), opt(m->upper), m->verdict});
    }
    for (std::size_t i = 1; i < cs.size(); ++i)
      row.push_back(got[0] && got[i] && got[0]->ratio && got[i]->ratio && *got[0]->ratio != 0
                        ? num(*got[i]->ratio / *got[0]->ratio)
                        : json(nullptr));
    t.add(std::move(row));
  }
  t.notes.push_back("Per campaign its own candidate cases against its own baseline cases (regression.hpp: pairs "
                    "matched by vm, regime, repeat and configuration; percentile interval at that campaign's "
                    "simultaneous level; verdict against its own tolerances). A blank = not an A/B campaign, or "
                    "the metric not measured. X / A = ratio of the two campaigns' ratios, descriptive.");
  return t;
}

}  // namespace

Report compare_campaigns(const std::vector<CompareCampaign>& cs) {
  if (cs.size() < 2)
    throw std::invalid_argument("compare takes two or more campaign DBs (got " + std::to_string(cs.size()) + ")");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < cs.size(); ++i) names.push_back(side_name(i));  // throws past Z

  Report r;
  const bool any_side = std::any_of(cs.begin(), cs.end(), [](const CompareCampaign& c) { return c.side.has_value(); });
  const bool any_ab = std::any_of(cs.begin(), cs.end(), [](const CompareCampaign& c) { return !c.ab.empty(); });
  if (any_side) {
    std::vector<CompareSide> sides;
    for (const auto& c : cs) {
      if (c.side) {
        sides.push_back(*c.side);
        continue;
      }
      CompareSide s;  // an A/B campaign: no Table 4, no mechanism medians of matched blocks
      s.label = c.label;
      s.lacks_arm = "A/B campaign (table compare_ab)";
      sides.push_back(s);
    }
    r = compare_sides(sides, names);
  }
  r.title = fmt::format("Reclaim ablation: comparison of {} campaigns, A the reference", cs.size());
  r.markdown_width = kTerminalWidth;
  if (any_ab) r.tables.push_back(ab_table(cs, names));

  std::vector<std::vector<std::pair<std::string, std::string>>> settings;
  for (const auto& c : cs) settings.push_back(c.settings);
  const auto lined = line_up_settings(settings);
  std::vector<SettingRow> differing;
  std::copy_if(lined.begin(), lined.end(), std::back_inserter(differing), [](const SettingRow& s) { return s.differs; });
  Table st = setting_table("compare_settings", "Settings that differ between the campaigns", names, differing);
  st.notes.push_back(fmt::format(
      "{} settings compared, {} differ; the others are equal in every campaign. Sources (recorded_settings.hpp): "
      "campaign_meta, the stored campaign YAML by dotted path as written, the arms table, and what the completed "
      "cases recorded (accelerator, guest kernel, harness commit, environment). \"{}\" = the campaign's DB does "
      "not hold the setting (a key its YAML leaves at the default, an older DB).",
      lined.size(), differing.size(), kSettingNotRecorded));
  r.tables.push_back(std::move(st));
  const auto diffs = difference_texts(names, differing);
  if (!diffs.empty()) {
    std::string w = fmt::format("The campaigns differ in {} setting(s) (table compare_settings): ", diffs.size());
    w += harness::text::join(diffs, "; ");
    r.warnings.push_back(w + ". Read every difference in the comparison tables below with these in mind.");
  }
  std::vector<std::string> which;
  for (std::size_t i = 0; i < cs.size(); ++i) which.push_back(names[i] + " = " + cs[i].label);
  r.summary.erase(std::remove_if(r.summary.begin(), r.summary.end(),
                                 [](const std::string& p) { return p.rfind("Sides: ", 0) == 0; }),
                  r.summary.end());  // compare_sides' list: said once, below
  r.summary.insert(r.summary.begin(),
                   fmt::format("{} campaigns: {}; A is the reference. {} of {} recorded settings differ (table "
                               "compare_settings).",
                               cs.size(), harness::text::join(which, "; "), differing.size(), lined.size()));
  json campaigns = json::array();
  for (std::size_t i = 0; i < cs.size(); ++i)
    campaigns.push_back({{"name", names[i]}, {"db", cs[i].label}, {"kind", cs[i].side ? "matched-blocks" : "ab"}});
  r.extra = {{"campaigns", campaigns}, {"settings_compared", lined.size()}, {"setting_differences", diffs}};
  return r;
}

}  // namespace analysis
