// The campaign's arms and declared comparisons (campaign_arms.hpp).
#include "harness/campaign/model/campaign_arms.hpp"

#include "analysis/data/arms.hpp"
#include "harness/case/control/policy.hpp"
#include "harness/yaml/did_you_mean.hpp"
#include "harness/yaml/yaml_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace harness::campaign {

namespace {

using yaml::Section;
namespace hc = harness::case_;

/// A study arm listed by name, checked against the registry.
Arm study_arm(Section& s, const YAML::Node& n, const std::string& f, const std::string& name) {
  const hc::PolicyInfo* p = hc::find_policy(name);
  if (!p || !p->study_position) {
    const std::string near = yaml::nearest_name(name, hc::study_arms());
    s.fail(n, f,
           fmt::format("'{}' is not one of the study's arms{} ({}); another arm is declared under `arms:` as "
                       "{{name, policy, params}} (policies: {}; `harness plan --list-policies`)",
                       name, near.empty() ? "" : "; did you mean '" + near + "'?", hc::study_arm_names(),
                       hc::policy_names()));
  }
  Arm a;
  a.name = name;
  a.policy = name;
  a.study = true;
  a.line = static_cast<int>(n.Mark().line) + 1;
  return a;
}

/// The node at `path` ("rules[0].do.reclaim.mib") under `root`, or its deepest ancestor
/// present in the YAML (a block written "zram_on" has no node for its parameters).
YAML::Node node_at(const YAML::Node& root, const std::string& path) {
  YAML::Node cur;
  cur.reset(root);  // rebinds (operator= would assign into the document)
  std::size_t i = 0;
  while (i < path.size()) {
    YAML::Node next;
    if (path[i] == '[') {
      const std::size_t close = path.find(']', i);
      if (close == std::string::npos || !cur.IsSequence()) break;
      const std::size_t idx = std::stoul(path.substr(i + 1, close - i - 1));
      if (idx >= cur.size()) break;
      const YAML::Node& c = cur;
      next.reset(c[idx]);
      i = close + 1;
    } else {
      if (path[i] == '.') ++i;
      const std::size_t end = std::min(path.find_first_of(".[", i), path.size());
      if (!cur.IsMap()) break;
      const YAML::Node& c = cur;
      const YAML::Node child = c[path.substr(i, end - i)];
      if (!child) break;
      next.reset(child);
      i = end;
    }
    cur.reset(next);
  }
  return cur;
}

Arm declared_arm(Section& top, const YAML::Node& n, const std::string& f, const std::vector<hc::ArmSettings>& settings) {
  Section s(n, f, top.file());
  Arm a;
  a.line = static_cast<int>(n.Mark().line) + 1;
  a.name = s.scalar<std::string>("name");
  if (auto why = hc::check_arm_name(a.name); !why) s.fail(n["name"], s.field("name"), why.error().message);
  a.policy = s.scalar<std::string>("policy");
  const hc::PolicyInfo* p = hc::find_policy(a.policy);
  if (!p)
    s.fail(n["policy"], s.field("policy"), hc::unknown_policy(a.policy, "; `harness plan --list-policies`"));
  // A study arm's name means the study's arm: the study's comparisons and findings are judged on
  // the arms that carry these names, so another policy or dose may not take one.
  if (const hc::PolicyInfo* study = hc::find_policy(a.name); study && study->study_position)
    s.fail(n["name"], s.field("name"),
           fmt::format("'{}' is the name of the study's arm: write `- {}` for the study's arm with the study's "
                       "parameters, or give this arm another name",
                       a.name, a.name));
  YAML::Node pn = s.get("params", false);
  const nlohmann::json given = pn ? yaml::to_json(pn, top.file(), s.field("params")) : nlohmann::json::object();
  auto fail_at = [&](const hc::ParamError& e) {
    const YAML::Node at = pn ? node_at(pn, e.field()) : n;
    s.fail(at, e.field().empty() ? s.field("params") : s.field("params") + "." + e.field(), e.why());
  };
  try {
    a.params = hc::validate_params(*p, given);
  } catch (const hc::ParamError& e) {
    fail_at(e);
  }
  for (const auto& st : settings)  // every regime's limit (a regime may declare its own)
    if (auto e = hc::settings_problem(*p, a.params, st)) fail_at(*e);
  s.finish();
  return a;
}

}  // namespace

std::string study_treatment() { return hc::study_arms().back(); }

hc::ArmSettings arm_settings(const Campaign& c, const Regime& g) {
  hc::ArmSettings s;
  if (g.bg_memory_max_mib) s.bg_memory_max_mib = static_cast<double>(*g.bg_memory_max_mib);
  s.bg_memory_max_field = bg_limit_field(c, g);
  if (c.bg_memory_high_mib) s.bg_memory_high_mib = static_cast<double>(*c.bg_memory_high_mib);
  s.warmup_s = c.warmup_s;
  s.pressure_s = c.pressure_s;
  s.recovery_s = c.recovery_s;
  s.telemetry_period_ms = c.telemetry_period_ms;
  return s;
}

std::vector<hc::ArmSettings> arm_settings_of_regimes(const Campaign& c) {
  std::vector<hc::ArmSettings> out;
  std::vector<std::optional<std::int64_t>> seen;
  for (const auto& g : c.regimes) {
    if (std::find(seen.begin(), seen.end(), g.bg_memory_max_mib) != seen.end()) continue;
    seen.push_back(g.bg_memory_max_mib);
    out.push_back(arm_settings(c, g));
  }
  return out;
}

std::string comparison_text(const Comparison& c) { return analysis::comparison_text(c); }

Expected<Comparison> parse_comparison(const std::string& text) {
  auto c = analysis::parse_comparison_text(text);
  if (c)
    for (const auto* arm : {&c->treatment, &c->comparator})
      if (auto named = hc::check_arm_name(*arm); !named) return problem("'" + text + "': " + named.error().message);
  return c;
}

std::vector<std::string> study_comparisons() {
  std::vector<std::string> out;  // the analysis' list of the study's four, as plan text
  for (const auto& d : analysis::study_comparisons())
    out.push_back(comparison_text({analysis::canary_name(d.canary), d.treatment, d.comparator}));
  return out;
}

void load_arms(Section& top, Campaign& c) {
  const bool conf = top.has("configurations"), arms = top.has("arms");
  if (conf && arms)
    top.fail(top.node()["arms"], "arms",
             "give either configurations (the study's arms by name) or arms (any arms, in order), not both");
  if (!conf && !arms) top.fail(top.node(), "arms", "missing (required): give arms, or configurations (the study's arms)");
  const std::string key = conf ? "configurations" : "arms";
  YAML::Node n = top.get(key, true);
  if (!n.IsSequence() || n.size() == 0) top.fail(n, key, "expected a non-empty list");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string f = key + "[" + std::to_string(i) + "]";
    Arm a = (conf || n[i].IsScalar()) ? study_arm(top, n[i], f, top.as<std::string>(n[i], f))
                                      : declared_arm(top, n[i], f, arm_settings_of_regimes(c));
    if (!seen.insert(a.name).second)
      top.fail(n[i], f, fmt::format("duplicate {} '{}'", conf ? "configuration" : "arm name", a.name));
    c.arms.push_back(std::move(a));
  }
  // configurations: the study's order whatever the file's (as always: the plans keep their hash).
  if (conf)
    std::stable_sort(c.arms.begin(), c.arms.end(), [](const Arm& a, const Arm& b) {
      return *hc::find_policy(a.policy)->study_position < *hc::find_policy(b.policy)->study_position;
    });
}

void load_comparisons(Section& s, Campaign& c) {
  YAML::Node n = s.get("comparisons", false);
  if (!n) {
    c.comparisons = study_comparisons();
    return;
  }
  c.comparisons_declared = true;
  if (!n.IsSequence() || n.size() == 0)
    s.fail(n, s.field("comparisons"),
           "expected a non-empty list of {canary, treatment, comparator} (or compute:static-zram, the study's spelling)");
  const auto names = arm_names(c);
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string f = s.field("comparisons") + "[" + std::to_string(i) + "]";
    Comparison k;
    if (n[i].IsMap()) {
      Section e(n[i], f, s.file());
      k.canary = e.scalar<std::string>("canary");
      k.treatment = e.scalar<std::string>("treatment");
      k.comparator = e.scalar<std::string>("comparator");
      e.finish();
      if (!analysis::parse_canary(k.canary))
        s.fail(n[i]["canary"], f + ".canary", "'" + k.canary + "' is not one of " + analysis::canary_list());
    } else {
      const auto text = s.as<std::string>(n[i], f);
      auto parsed = parse_comparison(text);
      if (!parsed)
        s.fail(n[i], f,
               "'" + text + "' is not <canary>:<comparator> (treatment " + study_treatment() +
                   ") or <canary>:<treatment>/<comparator>, canary " + analysis::canary_list());
      k = *parsed;
    }
    for (const auto* arm : {&k.treatment, &k.comparator})
      if (std::find(names.begin(), names.end(), *arm) == names.end())
        s.fail(n[i], f, fmt::format("names arm '{}', which this campaign does not run{} (its arms: {})", *arm,
                                    harness::yaml::did_you_mean(*arm, names), fmt::join(names, ", ")));
    if (const auto why = analysis::check_comparison(k); !why) s.fail(n[i], f, why.error().message);
    const std::string text = analysis::comparison_text(k);
    if (std::find(c.comparisons.begin(), c.comparisons.end(), text) != c.comparisons.end())
      s.fail(n[i], f, "duplicate comparison " + text);
    c.comparisons.push_back(text);
  }
}

Checked check_design_arms(const Campaign& c) {
  const auto names = arm_names(c);
  if (c.design == "matched-triplets" && names.size() != 1 && names.size() != 3)
    return problem(fmt::format("matched-triplets is the study's spelling for blocks of three arms; this campaign runs {}: "
                               "use design.kind matched-blocks",
                               names.size()));
  if (c.design == "matched-blocks") {
    if (names.size() < 2) return problem("matched-blocks compares arms: list at least two");
    if (!c.comparisons_declared)
      for (const auto& text : c.comparisons) {
        const auto k = parse_comparison(text);
        for (const auto* arm : {&k->treatment, &k->comparator})
          if (std::find(names.begin(), names.end(), *arm) == names.end())
            return problem(fmt::format("without analysis.comparisons the study's four are analysed, and they need arm "
                                       "'{}', which this campaign does not run: declare analysis.comparisons",
                                       *arm));
      }
  }
  if (c.design == "pilot" && (c.arms.size() != 1 || !c.arms[0].study || c.arms[0].name != study_treatment()))
    return problem("the pilot tests reclaim doses: configurations must be [" + study_treatment() + "]");
  return {};
}

std::vector<std::string> arm_names(const Campaign& c) {
  std::vector<std::string> out;
  for (const auto& a : c.arms) out.push_back(a.name);
  return out;
}

}  // namespace harness::campaign
