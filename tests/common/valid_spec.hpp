#pragma once
// A valid case spec (the harness/case/SPEC.md example), for every test that needs one: the
// agent tests, the guest end-to-end test (through agent_support.hpp) and the case executor's
// unit tests. Header-only (nlohmann-json); include as "tests/common/valid_spec.hpp".
#include <nlohmann/json.hpp>

#include <string>

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

}  // namespace test_support
