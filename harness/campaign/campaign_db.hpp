#pragma once
// The campaign database (results/schema.sql, WAL): the stored plan (campaign_meta +
// schedule), the state of every planned case, and every attempt.
// Rules (study, DESIGN.md): a completed case is never run again; only infra_failed
// cases are retried; every attempt is recorded; one transaction per imported bundle,
// with schedule.state and the attempts row updated in that same transaction.
#include "harness/campaign/schedule.hpp"
#include "results/db.hpp"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace harness::campaign {

/// The stored schedule does not match its preregistered hash (or the campaign file).
class ScheduleTampered : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Stores the plan in an empty campaign DB: campaign_meta keys name, seed, campaign_file,
/// campaign_yaml, campaign_sha256, schedule_json, schedule_sha256, planned_unix_ns; and one
/// schedule row per case (state pending). If the DB already holds a plan with the same
/// hash this is a no-op; a different plan throws ScheduleTampered (one campaign per DB).
void store_plan(results::Db& db, const Campaign& c, const Schedule& s);

/// True when the DB holds a plan.
bool has_plan(results::Db& db);

/// Loads the stored plan and verifies it: SHA-256 of campaign_meta.schedule_json equals
/// campaign_meta.schedule_sha256, and the schedule table rows equal the JSON rows (ids,
/// order, vm, regime, repeat, triplet, configuration, dose). Throws ScheduleTampered
/// naming the first difference.
Schedule load_verified_plan(results::Db& db);

/// Per-case progress read from the schedule and attempts tables.
struct CaseProgress {
  std::string state;  ///< pending | completed | infra_failed
  int attempts = 0;   ///< rows in attempts for the case
};
std::map<std::string, CaseProgress> load_progress(results::Db& db);

/// Data of one attempt, written with its outcome.
struct AttemptRecord {
  std::string case_id;
  int attempt = 1;                 ///< 1-based
  std::string host;                ///< agent URL or VM name
  std::int64_t started_unix_ns = 0;
  std::int64_t ended_unix_ns = 0;
};

/// Imports a bundle for `a` in one transaction: bundle rows, cases.attempt, schedule.state
/// (= the bundle's cases.status) and the attempts row. Returns that status
/// ("completed" | "infra_failed"). Throws results::DbError if the bundle is unreadable.
std::string import_attempt(results::Db& db, const std::string& bundle_path, const AttemptRecord& a);

/// Records an attempt that produced no bundle (agent lost, timeout, refused): attempts
/// row status infra_failed with `error`, schedule.state infra_failed, in one transaction.
void record_infra_failure(results::Db& db, const AttemptRecord& a, const std::string& error);

/// The id a case is submitted under for attempt `attempt` (1-based): the case id itself
/// for attempt 1, "<case_id>.a<attempt>" afterwards, because an agent refuses a case id it
/// has already used (agent/API.md, 409) and every attempt must stay distinguishable.
std::string agent_case_id(const std::string& case_id, int attempt);

/// Renames case `from` to `to` in every table of a downloaded bundle file (used for
/// attempts >= 2 before import). Throws results::DbError.
void rename_bundle_case(const std::string& bundle_path, const std::string& from, const std::string& to);

/// Wall clock, ns since the epoch.
std::int64_t unix_now_ns();

}  // namespace harness::campaign
