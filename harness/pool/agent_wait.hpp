#pragma once
// Reaching a guest's agent: the client options of a Guest (TLS pin, CA, plain-HTTP
// permission) and the bounded wait for agents that do not answer yet (ours: the runner
// waits for a host instead of burning retries). Used by the runner before and between
// cases and by engines when they adopt a running guest.
#include "harness/agent/client/client.hpp"
#include "harness/pool/pool.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace harness::pool {

/// `base` with the guest's TLS settings (CA file, pin, plain-HTTP permission) applied: what
/// every AgentClient for this guest is built with.
agent::ClientOptions client_options(const Guest& g, agent::ClientOptions base = {});

/// How long and how often to wait for an agent that does not answer. A host that does not
/// answer is waited for, never charged an attempt.
struct HostWait {
  int total_s = 600;               ///< bound on one wait, seconds
  int first_backoff_ms = 1000;     ///< first delay; doubled after each failed check
  int max_backoff_ms = 60000;      ///< cap of one delay
  int request_timeout_ms = 10000;  ///< one GET /v1/health (connect + reply)
};

/// GET /v1/health on every guest; the ones that do not answer 200 are asked again after 1x,
/// 2x, 4x ... first_backoff_ms (capped) until all answer or `w.total_s` passed. Prints one
/// line per wait to `out` ("vm1: agent at URL not answering (...); asking again in 2 s
/// (waited 1 s of at most 600 s)"; nothing when `out` is null). Returns one line per guest
/// still not answering ("vm1 (URL): agent not answering GET /v1/health after waiting N s:
/// <last error>"); empty = every guest answered. `answers`, when given, gets the body of each
/// guest's answering GET /v1/health by guest name (the runner reads the unclean mark and the
/// boot id from it instead of asking again).
std::vector<std::string> wait_for_agents(const std::vector<Guest>& guests, const HostWait& w, std::FILE* out,
                                         std::map<std::string, nlohmann::json>* answers = nullptr);

}  // namespace harness::pool
