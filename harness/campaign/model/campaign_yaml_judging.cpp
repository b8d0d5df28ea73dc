// The campaign sections that say how outcomes are judged (campaign_yaml_sections.hpp):
// analysis (the bootstrap and the comparisons), eligibility (the pilot rule) and assertions
// (`harness check`). Rules: the study, analysis/README.md, docs/CAMPAIGN.md.
#include "harness/campaign/model/campaign_yaml_sections.hpp"

#include "analysis/tables/verdict.hpp"
#include "harness/campaign/model/campaign_arms.hpp"

#include <map>
#include <sstream>
#include <utility>

namespace harness::campaign {

using yaml::Section;
using yaml::positive_int;

void read_analysis(Section& top, Campaign& c) {
  Section s = top.child("analysis", false);
  c.bootstrap_replicates = static_cast<int>(positive_int(s, "bootstrap_replicates", 10000));
  c.alpha = s.scalar<double>("alpha", 0.05);
  if (!(c.alpha > 0 && c.alpha < 1)) s.fail(s.node()["alpha"], s.field("alpha"), "must lie in (0, 1)");
  load_comparisons(s, c);
  // The analysis refuses fewer replicates than its percentile intervals need (analysis/tables/verdict.hpp
  // minimum_replicates: 10 in each tail at 1 - alpha/m): refused here, before any case runs.
  if (c.design == "matched-triplets" || c.design == "matched-blocks") {
    const int m = static_cast<int>(c.comparisons.size());
    std::ostringstream alpha;
    alpha << c.alpha;
    if (const int min_b = analysis::minimum_replicates(c.alpha, m); c.bootstrap_replicates < min_b)
      s.fail(s.node()["bootstrap_replicates"] ? s.node()["bootstrap_replicates"] : s.node(),
             s.field("bootstrap_replicates"),
             std::to_string(c.bootstrap_replicates) + " is too small for " + std::to_string(m) +
                 " comparisons at alpha " + alpha.str() +
                 ": the analysis needs 10 replicates in each tail of every 1 - alpha/m interval "
                 "(alpha/(2 m) x B >= 10), at least " + std::to_string(min_b));
  }
  s.finish();
}

void read_eligibility(Section& top, Campaign& c) {
  Section s = top.child("eligibility", false);
  c.eligibility_max_duration_s = s.scalar<double>("max_duration_s", 1.0);
  c.eligibility_min_achieved_ratio = s.scalar<double>("min_achieved_ratio", 0.8);
  if (!(c.eligibility_max_duration_s > 0))
    s.fail(s.node()["max_duration_s"], s.field("max_duration_s"), "must be > 0");
  if (!(c.eligibility_min_achieved_ratio > 0 && c.eligibility_min_achieved_ratio <= 2))
    s.fail(s.node()["min_achieved_ratio"], s.field("min_achieved_ratio"), "must lie in (0, 2]");
  if (const auto v = s.optional_scalar<std::string>("restoration")) {
    const auto r = analysis::restoration_named(*v);
    if (!r) s.fail(s.at("restoration"), s.field("restoration"), "'" + *v + "' is not one of " + analysis::restoration_names());
    c.eligibility_reading.restoration = *r;
  }
  if (const auto v = s.optional_scalar<std::string>("eagain")) {
    const auto e = analysis::eagain_named(*v);
    if (!e) s.fail(s.at("eagain"), s.field("eagain"), "'" + *v + "' is not one of " + analysis::eagain_names());
    c.eligibility_reading.eagain = *e;
  }
  s.finish();
}

void read_assertions(Section& top, Campaign& c) {
  YAML::Node n = top.get("assertions", false);
  if (!n) return;
  if (!n.IsSequence()) top.fail(n, "assertions", "expected a list");
  static const std::map<std::string, std::pair<bool, bool>> kinds{
      // kind -> (needs min, needs max)
      {"all_cases_completed", {false, false}},  {"reclaim_achieved_ratio", {true, false}},
      {"reclaim_duration_s", {false, true}},    {"trigger_within_s", {false, true}},
      {"restoration_clean", {false, false}},    {"no_foreground_oom", {false, false}},
      {"canary_p99_ms", {false, true}}};
  for (std::size_t i = 0; i < n.size(); ++i) {
    Section s(n[i], "assertions[" + std::to_string(i) + "]", top.file());
    Assertion a;
    a.line = static_cast<int>(n[i].Mark().line) + 1;
    a.kind = s.scalar<std::string>("kind");
    auto it = kinds.find(a.kind);
    if (it == kinds.end())
      s.fail(n[i]["kind"], s.field("kind"),
             "'" + a.kind + "' is not one of all_cases_completed, reclaim_achieved_ratio, reclaim_duration_s, "
                            "trigger_within_s, restoration_clean, no_foreground_oom, canary_p99_ms");
    if (it->second.first) a.min = s.scalar<double>("min");
    if (it->second.second) a.max = s.scalar<double>("max");
    s.finish();
    c.assertions.push_back(a);
  }
}

}  // namespace harness::campaign
