#pragma once
// Analysis settings preregistered in the campaign YAML (campaign_meta.campaign_yaml, written by
// `harness plan`; campaigns/*.yaml): `analysis.bootstrap_replicates`, `analysis.alpha`,
// `eligibility.max_duration_s`, `eligibility.min_achieved_ratio`, `design.kind`. Absent keys keep the study's
// defaults (10,000; 0.05; 1 s; 0.8).
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// Settings found in the YAML (empty = not given there).
struct CampaignSettings {
  std::optional<int> bootstrap_replicates;
  std::optional<double> alpha;
  std::optional<double> max_duration_s;
  std::optional<double> min_achieved_ratio;
  std::optional<std::string> design_kind;  ///< design.kind: pilot | matched-triplets (campaigns/*.yaml)
  std::vector<std::string> warnings;  ///< unreadable YAML or a bad value: names the key and line
};

/// Reads the settings from campaign_meta (key "campaign_yaml"). Never throws: problems become
/// warnings naming the key (and YAML line) and the default is kept.
CampaignSettings read_campaign_settings(const std::map<std::string, std::string>& meta);

}  // namespace analysis
