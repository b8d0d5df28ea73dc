// The typed state of one attempt (see attempt_state.hpp).
#include "harness/campaign/runner/attempt_state.hpp"

namespace harness::campaign {

void put_seen(AttemptRecord& a, const Seen& s) {
  if (!a.detail.is_object()) a.detail = nlohmann::json::object();
  a.detail["phase"] = s.phase.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.phase);
  a.detail["last_seen_unix_ns"] = s.last_seen_unix_ns ? nlohmann::json(s.last_seen_unix_ns) : nlohmann::json(nullptr);
}

}  // namespace harness::campaign
