#pragma once
// Submitting a case so that an accepted case is never lost, and adopting a case the agent
// already holds (its result was never imported, so importing it now is neither a loss nor a
// rerun): a POST whose reply is lost may still have started the case.
#include "harness/agent/client/client.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <string>

namespace harness::campaign {

/// How a submission ended.
struct Submission {
  enum class Kind {
    Submitted,  ///< the agent accepted the POST
    Adopted,    ///< the agent already holds the case id (a 409 for it, or a lost reply)
    Failed,     ///< no case started: an infrastructure failure before the case (why)
  } kind = Kind::Failed;
  std::string why;  ///< Failed: the attempt's error text
};

/// The waits of one submission.
struct SubmitTimes {
  std::chrono::milliseconds poll{1000};    ///< runner.poll_interval_ms: between tries
  std::chrono::milliseconds grace{60000};  ///< how long a lost reply's agent may stay silent
  int case_timeout_s = 0;                  ///< how long an agent busy with another case is waited for
};

/// POSTs `spec` (case id `id`) through `client`; `note` receives progress sentences.
/// - reply lost (no answer, 5xx, anything but the refusals below): ask the agent for `id`;
///   if it has it, adopt it; if it answers 404 it was not accepted; if it does not answer,
///   keep asking for `times.grace` before giving up;
/// - 409: the id already running there is adopted; busy with another case means wait (poll)
///   and submit again, up to case_timeout_s, without spending an attempt;
/// - 400, 412, 401: Failed with the agent's message.
Submission submit_or_adopt(agent::AgentClient& client, const nlohmann::json& spec, const std::string& id,
                           const SubmitTimes& times, const std::function<void(const std::string&)>& note);

}  // namespace harness::campaign
