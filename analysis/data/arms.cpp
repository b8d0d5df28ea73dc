// Arms and the declared family of comparisons (see arms.hpp).
#include "analysis/data/arms.hpp"

#include "analysis/data/comparison_spelling.hpp"
#include "analysis/data/study_facts.hpp"
#include "harness/text/join.hpp"
#include "results/db.hpp"
#include "results/store/arms.hpp"

#include <fmt/format.h>
#include "harness/yaml/strict_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

namespace analysis {
namespace {

// The comparison of a parsed spelling, or the Problem (check_comparison).
harness::Expected<ComparisonDef> make(const ComparisonSpelling& c) {
  if (auto checked = check_comparison(c); !checked) return harness::problem(checked.error().message);
  const Canary k = *parse_canary(c.canary);
  return ComparisonDef{k, c.treatment, c.comparator, comparison_label(k, c.treatment, c.comparator)};
}

// A YAML node as JSON (the comparison entries only: scalars and flat maps).
nlohmann::json yaml_entry(const YAML::Node& n) {
  if (n.IsScalar()) return n.as<std::string>();
  if (n.IsMap()) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& kv : n)
      if (kv.second.IsScalar()) o[kv.first.as<std::string>()] = kv.second.as<std::string>();
    return o;
  }
  return nullptr;
}

}  // namespace

int study_arm_position(std::string_view name) {
  for (std::size_t i = 0; i < kStudyArmCount; ++i)
    if (name == kStudyArms[i].name) return static_cast<int>(i);
  return -1;
}

const char* study_arm_name(int position) { return kStudyArms[position].name; }

std::string comparison_label(Canary canary, const std::string& treatment, const std::string& comparator) {
  return fmt::format("{}: {} / {}", canary_name(canary), treatment, comparator);
}

std::string block_word(const std::optional<std::string>& design_kind, std::size_t arms) {
  if (design_kind == "matched-triplets") return "triplet";
  if (design_kind == "matched-blocks") return "block";
  return arms == 3 ? "triplet" : "block";
}

const std::vector<ComparisonDef>& study_comparisons() {
  static const std::vector<ComparisonDef> defs = [] {
    std::vector<ComparisonDef> v;
    const std::string t = kStudyArms[kStudyTreatment].name;
    for (Canary k : {Canary::Compute, Canary::Sqlite})
      for (int c = 0; c < static_cast<int>(kStudyArmCount); ++c)
        if (c != kStudyTreatment) v.push_back({k, t, kStudyArms[c].name, comparison_label(k, t, kStudyArms[c].name)});
    return v;
  }();
  return defs;
}

bool is_study_family(const std::vector<ComparisonDef>& family) {
  const auto& s = study_comparisons();
  if (family.size() != s.size()) return false;
  std::set<std::string> a, b;
  for (const auto& c : family) a.insert(c.label + "|" + c.treatment + "|" + c.comparator);
  for (const auto& c : s) b.insert(c.label + "|" + c.treatment + "|" + c.comparator);
  return a == b;
}

std::string family_text(const std::vector<ComparisonDef>& family) {
  const std::string labels = harness::text::join(family, "; ", [](const ComparisonDef& c) { return c.label; });
  return fmt::format("the declared family of {} comparison{} ({})", family.size(), family.size() == 1 ? "" : "s",
                     labels);
}

harness::Expected<ComparisonDef> parse_comparison(const nlohmann::json& v) {
  if (v.is_object()) {
    auto field = [&](const char* k) { return v.contains(k) && v[k].is_string() ? v[k].get<std::string>() : ""; };
    return make({field("canary"), field("treatment"), field("comparator")});
  }
  if (!v.is_string())
    return harness::problem(
        "expected a string \"<canary>:<comparator>\" or \"<canary>:<treatment>/<comparator>\", or an object");
  return parse_comparison_text(v.get<std::string>()).and_then(make);
}

DeclaredComparisons declared_comparisons(const std::map<std::string, std::string>& meta,
                                         std::vector<std::string>& warnings) {
  DeclaredComparisons d;
  nlohmann::json list;
  if (auto it = meta.find("schedule_json"); it != meta.end()) {
    const auto plan = nlohmann::json::parse(it->second, nullptr, false);
    if (plan.is_object() && plan.contains("analysis") && plan["analysis"].is_object() &&
        plan["analysis"].contains("comparisons") && plan["analysis"]["comparisons"].is_array()) {
      list = plan["analysis"]["comparisons"];
      d.source = "plan JSON analysis.comparisons";
    }
  }
  if (list.is_null()) {
    if (auto it = meta.find("campaign_yaml"); it != meta.end()) {
      try {
        const YAML::Node root = harness::yaml::parse(it->second, "campaign_meta.campaign_yaml");
        if (root.IsMap() && root["analysis"] && root["analysis"].IsMap() && root["analysis"]["comparisons"] &&
            root["analysis"]["comparisons"].IsSequence()) {
          list = nlohmann::json::array();
          for (const auto& n : root["analysis"]["comparisons"]) list.push_back(yaml_entry(n));
          d.source = "campaign YAML analysis.comparisons";
        }
      } catch (const harness::yaml::InputError&) {
        // read_campaign_settings warns about an unreadable YAML
      } catch (const YAML::Exception&) {
        // an entry of the wrong shape: read_campaign_settings and the plan's check name it
      }
    }
  }
  if (list.is_array()) {
    std::set<std::string> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto c = parse_comparison(list[i]);
      if (!c) {
        warnings.push_back(fmt::format("{}[{}]: {}; left out of the family", d.source, i, c.error().message));
        continue;
      }
      const std::string key = std::string(canary_name(c->canary)) + ":" + c->treatment + "/" + c->comparator;
      if (!seen.insert(key).second) {
        warnings.push_back(fmt::format("{}[{}]: {} is declared twice; counted once", d.source, i, c->label));
        continue;
      }
      d.comparisons.push_back(std::move(*c));
    }
    if (d.comparisons.empty())
      warnings.push_back(fmt::format("{} declares no readable comparison: the study's four are analysed", d.source));
  }
  if (d.comparisons.empty()) {
    d.comparisons = study_comparisons();
    d.source = "the study's four (none declared)";
  } else {
    d.declared = true;
  }
  return d;
}

std::vector<std::string> default_arm_names(const std::vector<std::string>& configurations,
                                           const std::vector<ComparisonDef>& family) {
  std::set<std::string> names(configurations.begin(), configurations.end());
  for (const auto& c : family) {
    names.insert(c.treatment);
    names.insert(c.comparator);
  }
  std::vector<std::string> out;
  for (const auto& a : kStudyArms)
    if (names.erase(a.name)) out.push_back(a.name);
  out.insert(out.end(), names.begin(), names.end());  // others, sorted by name
  return out;
}

std::vector<Arm> load_arms(results::Db& db, const std::vector<std::string>& configurations,
                           const std::vector<ComparisonDef>& family, bool& recorded) {
  std::vector<Arm> arms;
  recorded = false;
  for (auto& a : results::read_arms(db)) arms.push_back({a.name, a.policy, a.params_json, a.sha256});
  recorded = !arms.empty();
  if (!recorded)
    for (auto& n : default_arm_names(configurations, family)) arms.push_back({std::move(n), "", "", ""});
  return arms;
}

std::string arm_record_text(const Arm& a) {
  return "policy " + a.policy + ", params " + a.params_json + ", sha256 " + a.sha256;
}

}  // namespace analysis
