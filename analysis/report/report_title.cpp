// The report's title (see report_title.hpp).
#include "analysis/report/report_title.hpp"

#include "analysis/data/campaign_settings.hpp"

#include <fmt/format.h>

namespace analysis {

std::string campaign_kind(const std::map<std::string, std::string>& meta) {
  if (auto it = meta.find("kind"); it != meta.end() && !it->second.empty()) return it->second;
  const auto s = read_campaign_settings(meta);
  if (s.kind) return *s.kind;
  if (s.design_kind && *s.design_kind == "pilot") return "pilot";
  return "";
}

std::string report_title(const CampaignData& data) {
  const auto it = data.meta.find("name");
  const std::string name = it != data.meta.end() && !it->second.empty() ? it->second : data.db_path;
  const std::string kind = campaign_kind(data.meta);
  if (kind == "smoke") return fmt::format("Reclaim ablation: smoke run {} (mechanism check, not evidence)", name);
  if (kind == "ci") return fmt::format("Reclaim ablation: CI regression run {}", name);
  if (kind == "pilot") return fmt::format("Reclaim ablation: pilot campaign {} (matched-triplet tables)", name);
  if (kind == "confirmatory") return fmt::format("Reclaim ablation: confirmatory analysis of {}", name);
  return fmt::format("Reclaim ablation: analysis of campaign {} (kind not recorded)", name);
}

}  // namespace analysis
