#pragma once
// Shared by the agent tests (tests/unit/agent) and the guest end-to-end test
// (tests/vm/vm): a valid case spec (the SPEC.md example) and the authenticated client +
// "submit, then poll until the state is final" helpers, so that both talk to an agent
// the same way. Header-only; include as "tests/common/agent_support.hpp".
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <thread>

namespace test_support {

/// The SPEC.md example (a valid bounded-reclaim spec) with `id`, `campaign` and phases.
inline nlohmann::json valid_spec(const std::string& id, const std::string& campaign = "smoke",
                                 int warmup_s = 120, int pressure_s = 300, int recovery_s = 120,
                                 long long allocation_bytes = 629145600) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "case_id": "x", "campaign": "smoke", "vm": "vm0", "regime": "fast-structured", "repeat": 1,
    "triplet_id": "vm0/fast-structured/1", "configuration": "bounded-reclaim",
    "dose_bytes": 100663296, "pinned_commit": "any",
    "vm_shape": {"vcpus": 1, "memory_mib": 1024},
    "phases_s": {"warmup": 120, "pressure": 300, "recovery": 120},
    "cgroups": {"parent": "harness", "bg_memory_max_bytes": 314572800, "bg_memory_high_bytes": null,
                "fg_memory_max_bytes": null, "fg_memory_low_bytes": null},
    "backend": {"zram_disksize_bytes": 536870912, "zram_algorithm": "lzo-rle", "zram_priority": 100,
                "swapfile_path": "/var/lib/harness/swapfile", "swapfile_priority": 10},
    "pressure": {"allocation_bytes": 629145600, "rate_mib_s": 32, "active_set_bytes": 134217728,
                 "contents": "structured", "seed": 1},
    "canaries": {"period_ms": 100, "compute_hot_bytes": 16777216,
                 "sqlite_db_path": "/var/lib/harness/canary.db", "sqlite_queries_per_request": 8, "seed": 1},
    "trigger": {"window_ms": 1000, "min_increase_us": 1000, "consecutive_windows": 3},
    "telemetry_period_ms": 1000, "restoration_timeout_s": 120})");
  j["case_id"] = id;
  j["campaign"] = campaign;
  j["phases_s"] = {{"warmup", warmup_s}, {"pressure", pressure_s}, {"recovery", recovery_s}};
  j["pressure"]["allocation_bytes"] = allocation_bytes;
  return j;
}

/// A client for the agent on 127.0.0.1:`port`, with the bearer token when given.
inline httplib::Client agent_client(int port, const std::string& token, int read_timeout_s = 30) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(read_timeout_s, 0);
  if (!token.empty()) c.set_default_headers({{"Authorization", "Bearer " + token}});
  return c;
}

/// Polls GET /v1/cases/<id> every `poll` until the state is neither queued nor running
/// or `timeout` passed; returns the last status document (empty when none was read).
inline nlohmann::json wait_final(httplib::Client& c, const std::string& id, std::chrono::seconds timeout,
                                 std::chrono::milliseconds poll = std::chrono::milliseconds(100)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  nlohmann::json j;
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = c.Get(("/v1/cases/" + id).c_str());
    if (r && r->status == 200) {
      j = nlohmann::json::parse(r->body);
      const std::string s = j["state"];
      if (s != "queued" && s != "running") return j;
    }
    std::this_thread::sleep_for(poll);
  }
  return j;
}

}  // namespace test_support
