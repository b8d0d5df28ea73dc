#pragma once
// The progress of each planned case, read from schedule and attempts: its state, its attempts,
// the runs that count against its retry budget (docs/PROTOCOL.md) and an attempt in flight.
#include "results/db.hpp"

#include <map>
#include <string>

namespace harness::campaign {

/// Per-case progress read from the schedule and attempts tables.
struct CaseProgress {
  std::string state;        ///< pending | completed | infra_failed | lost
  int attempts = 0;         ///< rows in attempts for the case (runs and operator actions)
  /// Run attempts since the latest mark-infra or reset-infra row (the retry budget restarts
  /// there: PROTOCOL.md assumption, so `harness mark-infra` makes the case runnable again);
  /// operator rows and attempts interrupted before the case reached the agent (kind
  /// interrupted: the runner died, not the case) are not runs.
  int runs_since_mark = 0;
  int last_attempt = 0;     ///< largest attempts.attempt (0 = none); the next is last_attempt + 1
  /// Attempt number of an attempts row with status 'running' (0 = none): an attempt that a
  /// runner started and had not finished when it stopped (kill -9, crash). The next
  /// `harness run` takes it over (runner.hpp) instead of starting a new attempt.
  int inflight = 0;
};

/// The progress of every scheduled case, by case id.
std::map<std::string, CaseProgress> load_progress(results::Db& db);

/// Progress of one case. Throws std::runtime_error when the case is not in the schedule.
CaseProgress case_progress(results::Db& db, const std::string& case_id);

}  // namespace harness::campaign
