#pragma once
// The typed state of one attempt of a case on one guest (the worker's loop, worker.hpp):
// which step it is at (prepare, submit, follow, import, judge), what polling saw (the
// phase decides lost vs infra_failed, PROTOCOL.md) and how it ended.
#include "harness/agent/client/client.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/runner/lost_rule.hpp"
#include "harness/campaign/plan/schedule.hpp"

#include <cstdint>
#include <string>

namespace harness::campaign {

/// The attempt's steps, in order; each step names the next.
enum class Step {
  Prepare,  ///< adopt a case the agent already knows, or boot / reboot the guest for it
  Submit,   ///< POST the spec (or adopt it when the reply was lost or the id is already there)
  Follow,   ///< poll until the case is final or the lost rule says it vanished
  Import,   ///< download the bundle and import it with the attempts row in one transaction
  Judge,    ///< record an attempt that did not import: infra failure or the lost rule's verdict
  Done,
};

/// What polling saw of the case (PROTOCOL.md: the last phase decides lost vs infra_failed).
struct Seen {
  std::string phase;                   ///< last phase reported (setup..restoration); "" = never
  std::int64_t last_seen_unix_ns = 0;
  std::int64_t submitted_unix_ns = 0;  ///< wall clock of the submission (the original one after a takeover)
};

/// Writes `s` into the attempt's detail_json (phase, last_seen_unix_ns; other keys kept).
void put_seen(AttemptRecord& a, const Seen& s);

/// One attempt in flight.
struct Attempt {
  const ScheduledCase* k = nullptr;
  AttemptRecord rec;
  std::string agent_id;  ///< the case id on the agent (agent_case_id)
  Seen seen;
  bool adopt = false;    ///< the agent already holds the case: no submission
  Step step = Step::Prepare;
  agent::CaseStatus status;  ///< the last answer (final when Import is reached)
  /// Judge: an infrastructure failure before the case ran (recorded as it is) when not empty,
  /// else the lost rule's ruling.
  std::string infra_error;
  Ruling ruling;
};

}  // namespace harness::campaign
