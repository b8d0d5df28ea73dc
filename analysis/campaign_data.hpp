#pragma once
// Loads a campaign DB (results/schema.sql) into per-case summaries.
// Only `completed` cases are analysed; infra_failed cases and scheduled cases without a
// completed record are listed (and warned about by the report), never silently dropped.
#include "analysis/case_summary.hpp"

#include <map>
#include <string>
#include <vector>

namespace analysis {

/// The campaign as the analysis sees it.
struct CampaignData {
  std::string db_path;
  std::map<std::string, std::string> meta;   ///< campaign_meta key/value (seed, schedule_sha256, ...)
  std::vector<CaseSummary> cases;            ///< completed cases (usable or excluded with a reason)
  std::vector<std::string> infra_failed;     ///< case_id: status infra_failed (latest attempt)
  std::vector<std::string> missing;          ///< case_id: in the schedule, no case record at all
  std::vector<std::string> warnings;         ///< loading problems (each names the case and field)
};

/// Opens `db_path` read-only and summarises every completed case: pressure-phase latency per
/// canary (CaseSummary::latency), mechanism counters, spec_json. A completed case without a
/// pressure phase, with invalid spec_json, or with a response <= 0 is kept but marked unusable
/// with the reason (and a warning). Errors: results::DbError (file unreadable, not a campaign DB).
CampaignData load_campaign(const std::string& db_path);

/// Loads raw canary requests of one case and canary ordered by seq (for figures / the Python module).
std::vector<RawRequest> load_requests(const std::string& db_path, const std::string& case_id, Canary canary);

}  // namespace analysis
