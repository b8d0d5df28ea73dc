#pragma once
// The report's title and the campaign's kind it follows (smoke, ci, pilot, confirmatory).
#include "analysis/data/campaign_data.hpp"

#include <map>
#include <string>

namespace analysis {

/// The campaign's kind: campaign_meta.kind, else the stored campaign YAML's `kind`, else "pilot"
/// for a pilot design, else "" (not recorded).
std::string campaign_kind(const std::map<std::string, std::string>& meta);

/// Report title following the campaign kind: smoke / ci / pilot / confirmatory / not recorded,
/// naming the campaign (campaign_meta.name, else the DB path).
std::string report_title(const CampaignData& data);

}  // namespace analysis
