#pragma once
// Loads a campaign DB (results/schema.sql) into per-case summaries. `completed` and `lost` cases
// are analysed (docs/PROTOCOL.md: every case keeps its outcome); infra_failed cases and scheduled
// cases without a record are listed (and warned about by the report), never silently dropped.
#include "analysis/data/arms.hpp"
#include "analysis/data/attempts_audit.hpp"
#include "analysis/data/case_summary.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// One row of the preregistered schedule (campaign DB only).
struct ScheduledCase {
  std::string case_id, vm, regime, triplet_id, configuration, state;
  std::int64_t repeat = 0;
};

/// The campaign as the analysis sees it.
struct CampaignData {
  std::string db_path;
  std::map<std::string, std::string> meta;   ///< campaign_meta key/value (seed, schedule_sha256, ...)
  std::vector<CaseSummary> cases;            ///< completed and lost cases (usable or excluded with a reason)
  std::vector<std::string> infra_failed;     ///< case_id: status infra_failed (latest attempt)
  std::vector<std::string> missing;          ///< case_id: in the schedule, no case record at all
  std::vector<ScheduledCase> schedule;       ///< the schedule table (empty for a bundle)
  std::vector<AttemptRow> attempts;          ///< the attempts audit trail (empty when absent)
  std::vector<std::string> warnings;         ///< loading problems (each names the case and field)
  /// The campaign's arms in report order (analysis/data/arms.hpp): the `arms` table by position, else
  /// the study's arms found in the cases, the schedule and the comparisons, in the study's order.
  std::vector<Arm> arms;
  bool arms_recorded = false;                ///< true: from the `arms` table (policy, params, sha256 known)
  std::vector<ComparisonDef> comparisons;    ///< the declared family (default: the study's four)
  std::string comparisons_source;            ///< where the family came from (DeclaredComparisons::source)
};

/// Opens `db_path` read-only and summarises every completed and lost case: pressure-phase latency
/// per canary with censoring (case_summary.hpp), mechanism counters, outcome records, spec_json.
/// Lost cases (no trace): worst-observed imputation (docs/PROTOCOL.md assumption): per canary,
/// p50/p95/p99 = the largest p50/p95/p99 of that canary among the usable completed cases of the DB
/// (LatencySummary::imputed; p99 is the rule, p50/p95 follow it for the secondary tables). A
/// completed case without a pressure phase, with invalid spec_json, or with a response <= 0 is
/// kept but marked unusable with the reason (a recording error, not an outcome; a warning).
/// Observation end for censoring = restoration start; without a restoration phase, the latest
/// phase end_ns (assumption, warned). Errors: results::DbError (file unreadable, not a campaign DB).
/// `threads`: cases are summarised by this many threads, each on its own read-only connection
/// (0 = the usable cores, at most 4); the result (cases, their order, warnings) is the same for
/// every thread count. At ten times the study (1,800 cases, 19.4 M requests) the reading of the
/// requests is most of `harness analyze`.
CampaignData load_campaign(const std::string& db_path, unsigned threads = 0);

/// Summarises one case of `db` as load_campaign does (a lost case without its imputation, which
/// needs the whole campaign: impute_lost). nullopt when there is no such case or its status is
/// neither completed nor lost. Loading problems are appended to `warnings`. Errors: results::DbError.
std::optional<CaseSummary> load_case(results::Db& db, const std::string& case_id, std::vector<std::string>& warnings);

/// Worst-observed imputation (docs/PROTOCOL.md assumption) of every lost case in `data`: per
/// canary, p50/p95/p99 = the largest of that canary among the usable completed cases; a lost
/// case with nothing to impute from is marked unusable with the reason.
void impute_lost(CampaignData& data);

/// Loads raw canary requests of one case and canary ordered by seq (for figures / the Python module).
std::vector<RawRequest> load_requests(const std::string& db_path, const std::string& case_id, Canary canary);

}  // namespace analysis
