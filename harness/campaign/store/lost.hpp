#pragma once
// A case lost after its pressure phase began (docs/PROTOCOL.md): an outcome, recorded with why,
// never rerun automatically.
#include "harness/campaign/plan/schedule.hpp"
#include "harness/campaign/store/attempts.hpp"
#include "harness/campaign/store/import.hpp"
#include "results/db.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace harness::campaign {

/// Why a case was lost (PROTOCOL.md): outcome_json {"lost": {phase, last_seen_unix_ns, reason}}.
struct LostCase {
  std::string phase;                 ///< last phase seen by polling ("" = never seen)
  std::int64_t last_seen_unix_ns = 0;  ///< wall clock of the last successful status poll (0 = never)
  std::string reason;                ///< e.g. "agent lost: ...", "case timed out after 2760 s"
  /// Build of the agent that ran it, from its qualification before scheduling (no bundle
  /// says otherwise): cases.source_commit / source_dirty. Empty / nullopt = unknown.
  std::string source_commit;
  std::optional<bool> source_dirty;
  RanOn ran_on;  ///< where it ran (cases.accelerator, host_uri, overcommitted, engine_kind; "" / nullopt = NULL)
};

/// Records a case lost after the pressure phase started, in one transaction: a `cases` row
/// (status lost, spec_json = `k.spec` with the schedule's case id, outcome_json
/// {"lost": {...}}, source_commit/dirty from `why`), schedule.state lost and the attempts row (status lost, detail_json
/// the same object). A lost case is an outcome: never rerun automatically (study, PROTOCOL.md).
void record_lost(results::Db& db, const ScheduledCase& k, const std::string& campaign, const AttemptRecord& a,
                 const LostCase& why);

}  // namespace harness::campaign
