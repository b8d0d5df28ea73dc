// Preregistered analysis settings (see campaign_settings.hpp).
#include "analysis/data/campaign_settings.hpp"

#include "analysis/data/arms.hpp"

#include <fmt/format.h>
#include "harness/yaml/strict_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

namespace analysis {
namespace {
template <typename T>
void read(const YAML::Node& parent, const char* section, const char* key, std::optional<T>& out, T lo, T hi,
          std::vector<std::string>& warnings) {
  const YAML::Node n = parent[section] ? parent[section][key] : YAML::Node();
  if (!n || n.IsNull()) return;
  try {
    const T v = n.as<T>();
    if (v < lo || v > hi) {
      warnings.push_back(fmt::format("campaign YAML line {}: {}.{} = {} outside [{}, {}]; using the default",
                                     n.Mark().line + 1, section, key, v, lo, hi));
      return;
    }
    out = v;
  } catch (const YAML::Exception&) {
    warnings.push_back(fmt::format("campaign YAML line {}: {}.{} is not a number; using the default", n.Mark().line + 1,
                                   section, key));
  }
}
}  // namespace

CampaignSettings read_campaign_settings(const std::map<std::string, std::string>& meta) {
  CampaignSettings s;
  const auto it = meta.find("campaign_yaml");
  if (it == meta.end()) return s;
  YAML::Node root;
  try {
    root = harness::yaml::parse(it->second, "campaign_meta.campaign_yaml");
  } catch (const harness::yaml::InputError& e) {
    s.warnings.push_back(fmt::format("{}: unreadable; using the study defaults", e.what()));
    return s;
  }
  if (!root.IsMap()) return s;
  read<int>(root, "analysis", "bootstrap_replicates", s.bootstrap_replicates, 100, 10'000'000, s.warnings);
  read<double>(root, "analysis", "alpha", s.alpha, 1e-6, 0.5, s.warnings);
  read<double>(root, "eligibility", "max_duration_s", s.max_duration_s, 0.0, 3600.0, s.warnings);
  read<double>(root, "eligibility", "min_achieved_ratio", s.min_achieved_ratio, 0.0, 10.0, s.warnings);
  // The pilot rule's reading (pilot_reading.hpp): a name it does not know keeps the default.
  auto reading = [&](const char* key, auto named, const std::string& names, auto& out) {
    const YAML::Node n = root["eligibility"] && root["eligibility"].IsMap() ? root["eligibility"][key] : YAML::Node();
    if (!n || n.IsNull()) return;
    const auto v = n.IsScalar() ? named(n.Scalar()) : std::nullopt;
    if (v) out = *v;
    else
      s.warnings.push_back(fmt::format("campaign YAML line {}: eligibility.{} is not one of {}; using the default",
                                       n.Mark().line + 1, key, names));
  };
  reading("restoration", restoration_named, restoration_names(), s.restoration);
  reading("eagain", eagain_named, eagain_names(), s.eagain);
  if (root["design"] && root["design"].IsMap() && root["design"]["kind"] && root["design"]["kind"].IsScalar())
    s.design_kind = root["design"]["kind"].as<std::string>();
  if (root["kind"] && root["kind"].IsScalar()) s.kind = root["kind"].as<std::string>();
  return s;
}

}  // namespace analysis
