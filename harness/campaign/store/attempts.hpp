#pragma once
// The attempts of a campaign's cases as the runner records them (docs/PROTOCOL.md): every
// attempt has an attempts row; while it runs, an in-flight row (status running) that its outcome
// replaces in the transaction that records the outcome, with schedule.state; a runner killed at
// any point leaves either the outcome or the in-flight row (runner takeover). The rows:
// results/store/attempts.hpp.
#include "harness/kernel/wall_clock.hpp"
#include "results/db.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace harness::campaign {

/// Data of one attempt, written with its outcome.
struct AttemptRecord {
  std::string case_id;
  int attempt = 1;                 ///< 1-based
  std::string host;                ///< agent URL or VM name
  std::int64_t started_unix_ns = 0;
  std::int64_t ended_unix_ns = 0;
  /// attempts.detail_json: what the runner saw, e.g. {"phase": "warmup",
  /// "last_seen_unix_ns": ...} (PROTOCOL.md: the last phase seen is kept). Null = none.
  nlohmann::json detail;
  /// attempts.kind: run | adopted (taken over from an interrupted runner) | interrupted
  /// (the runner was interrupted before the case reached the agent: not counted against
  /// max_infra_retries, ours) | mark-infra | reset-infra.
  std::string kind = "run";
};

/// Writes the attempts row of an attempt that starts now: status 'running', ended NULL,
/// a.started_unix_ns as its real start, a.detail as detail_json. It is replaced by the
/// attempt's outcome row (same case_id, attempt) in the transaction that records it, so a
/// runner killed at any point leaves either the outcome or this row (runner takeover).
void begin_attempt(results::Db& db, const AttemptRecord& a);

/// Replaces detail_json (and kind) of the in-flight row of `a` (phase seen, submitted, takeovers).
void update_inflight(results::Db& db, const AttemptRecord& a);

/// The in-flight attempts row of `case_id` (status 'running'), if any: attempt, host,
/// started_unix_ns, kind and detail as stored.
std::optional<AttemptRecord> inflight_attempt(results::Db& db, const std::string& case_id);

/// Writes the outcome row of attempt `a` with `status` and `error` (replacing its in-flight row;
/// kind `kind`, or a.kind when empty) and sets schedule.state to `status` (infra_failed for the
/// operator's marked_infra and reset_infra rows). Inside the caller's transaction.
void record_attempt_outcome(results::Db& db, const AttemptRecord& a, const std::string& status,
                            const std::optional<std::string>& error, const std::string& kind = "");

/// Records an attempt that produced no bundle before the pressure phase (agent refused,
/// reboot failed, lost during setup/warmup): attempts row status infra_failed with `error`,
/// schedule.state infra_failed, in one transaction. Rerun while retries are left.
void record_infra_failure(results::Db& db, const AttemptRecord& a, const std::string& error);

/// Wall clock, ns since the epoch (harness/kernel/wall_clock.hpp).
using harness::kernel::unix_now_ns;

}  // namespace harness::campaign
