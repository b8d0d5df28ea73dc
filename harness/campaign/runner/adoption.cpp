// Submitting or adopting a case (see adoption.hpp).
#include "harness/campaign/runner/adoption.hpp"

#include <thread>

namespace harness::campaign {

namespace {

using Clock = std::chrono::steady_clock;
using agent::FailureKind;

/// After a POST whose reply was lost (`post_error`): does the agent hold `id`? Asks until
/// it answers or `t0` + grace passed.
Submission after_lost_reply(agent::AgentClient& client, const std::string& id, const std::string& post_error,
                            Clock::time_point t0, const SubmitTimes& times,
                            const std::function<void(const std::string&)>& note) {
  for (;;) {
    const auto known = client.status(id);
    if (known.ok()) {
      note("POST reply lost (" + post_error + "); the agent has " + id + ": adopting it");
      return {Submission::Kind::Adopted, ""};
    }
    if (known.is(FailureKind::NotFound)) return {Submission::Kind::Failed, "submission not accepted: " + post_error};
    if (Clock::now() - t0 > times.grace)
      return {Submission::Kind::Failed,
              "submission failed and the agent did not answer for " +
                  std::to_string(std::chrono::duration_cast<std::chrono::seconds>(times.grace).count()) +
                  " s: " + post_error + "; last: " + known.message()};
    std::this_thread::sleep_for(times.poll);
  }
}

}  // namespace

Submission submit_or_adopt(agent::AgentClient& client, const nlohmann::json& spec, const std::string& id,
                           const SubmitTimes& times, const std::function<void(const std::string&)>& note) {
  const auto t0 = Clock::now();
  bool noted_busy = false;
  for (;;) {
    const auto posted = client.submit(spec);
    if (posted.ok()) return {Submission::Kind::Submitted, ""};
    const auto& f = posted.failure();
    if (f.kind == FailureKind::Rejected || f.kind == FailureKind::NotQualified || f.kind == FailureKind::Unauthorised)
      return {Submission::Kind::Failed, f.message};
    // The reply is lost, not necessarily the case: ask before counting a failure.
    if (f.kind != FailureKind::Conflict) return after_lost_reply(client, id, f.message, t0, times, note);
    if (client.status(id).ok()) {
      note("agent already runs " + id + ": adopting it");
      return {Submission::Kind::Adopted, ""};
    }
    // Not adoptable: the agent is busy with another case.
    if (Clock::now() - t0 > std::chrono::seconds(times.case_timeout_s))
      return {Submission::Kind::Failed, "agent stayed busy with another case for " +
                                            std::to_string(times.case_timeout_s) +
                                            " s (runner.case_timeout_s): " + f.message};
    if (!noted_busy) note("agent busy, waiting: " + f.message);
    noted_busy = true;
    std::this_thread::sleep_for(times.poll);
  }
}

}  // namespace harness::campaign
