#pragma once
// Taking over the attempt an interrupted runner left in flight (runner.hpp "Takeover"): its
// attempts row becomes kind 'adopted' with runner_interrupted = true and one more entry in
// detail_json.takeovers, and what the dead runner saw (phase, last seen, submission) is
// what the lost rule goes on from. Pure: the worker stores the row and follows the case.
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/runner/attempt_state.hpp"

#include <cstdint>
#include <string>

namespace harness::campaign {

struct TakenOver {
  AttemptRecord rec;      ///< the row to store (kind adopted, takeovers appended, runner_pid = ours)
  std::string agent_id;   ///< detail_json.agent_case_id, or `fallback_agent_id` when the row has none
  Seen seen;              ///< the phase and times the interrupted runner recorded
  bool submitted = false; ///< the row says the case was submitted before the runner died
};

/// The takeover of `row` by the runner `pid` at `now_unix_ns`; `host` is this guest ("vm url").
TakenOver take_over(AttemptRecord row, const std::string& host, const std::string& fallback_agent_id, int pid,
                    std::int64_t now_unix_ns);

/// "taking over ID (attempt N, started S s ago) from an interrupted runner[ (last phase seen: P)]".
std::string takeover_note(const TakenOver& t, std::int64_t now_unix_ns);

}  // namespace harness::campaign
