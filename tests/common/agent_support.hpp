#pragma once
// Shared by the agent tests (tests/unit/agent) and the guest end-to-end test
// (tests/vm/vm): a valid case spec (valid_spec.hpp) and the authenticated client +
// "submit, then poll until the state is final" helpers, so that both talk to an agent
// the same way. Header-only; include as "tests/common/agent_support.hpp".
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/common/valid_spec.hpp"

#include <chrono>
#include <string>
#include <thread>

namespace test_support {

/// A client for the agent on 127.0.0.1:`port`, with the bearer token when given.
inline httplib::Client agent_client(int port, const std::string& token, int read_timeout_s = 30) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(read_timeout_s, 0);
  if (!token.empty()) c.set_default_headers({{"Authorization", "Bearer " + token}});
  return c;
}

/// Polls GET /v1/cases/<id> every `poll` until the state is final (completed, infra_failed
/// or cancelled) or `timeout` passed; returns the last status document (empty when none
/// was read).
inline nlohmann::json wait_final(httplib::Client& c, const std::string& id, std::chrono::seconds timeout,
                                 std::chrono::milliseconds poll = std::chrono::milliseconds(100)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  nlohmann::json j;
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = c.Get(("/v1/cases/" + id).c_str());
    if (r && r->status == 200) {
      j = nlohmann::json::parse(r->body);
      const std::string s = j["state"];
      if (s == "completed" || s == "lost" || s == "infra_failed" || s == "cancelled") return j;
    }
    std::this_thread::sleep_for(poll);
  }
  return j;
}

}  // namespace test_support
