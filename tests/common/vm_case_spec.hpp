#pragma once
// A short case spec (harness/case/SPEC.md) for the vm-labelled tests that run `harness case
// run` in a fresh guest: tests/vm/case/{case,zram_ownership}_vm_test.cpp. Fixed parts: campaign
// "vmtest", vm0, regime fast-structured, repeat 1, lzo-rle zram at priority 100 and the
// campaign swapfile at 10, 64 MiB/s structured pressure, 100 ms canaries with a 16 MiB hot
// region and 8 queries per request, seed 1. Header-only (nlohmann-json); include as
// "tests/common/vm_case_spec.hpp".
#include <nlohmann/json.hpp>

#include <string>

namespace test_support {

/// What differs between the vm tests' cases. Phases in s, sizes in MiB.
struct VmCaseShape {
  int warmup_s = 0, pressure_s = 0, recovery_s = 0;
  long long bg_memory_max_mib = 0;   ///< cgroups.bg_memory_max_bytes
  long long zram_disksize_mib = 0;   ///< backend.zram_disksize_bytes
  long long allocation_mib = 0;      ///< pressure.allocation_bytes
  long long active_set_mib = 0;      ///< pressure.active_set_bytes
};

/// The spec of case `id` in `configuration` (static-zram | delayed-activation |
/// bounded-reclaim; bounded-reclaim gets dose_bytes 96 MiB) with the sizes of `shape`;
/// `triplet_id` "" leaves the key out (it is optional in SPEC.md).
inline nlohmann::json vm_case_spec(const std::string& id, const std::string& configuration, const VmCaseShape& shape,
                                   const std::string& triplet_id = "") {
  using json = nlohmann::json;
  constexpr long long kMiB = 1ll << 20;
  json s = {
      {"case_id", id},
      {"campaign", "vmtest"},
      {"vm", "vm0"},
      {"regime", "fast-structured"},
      {"repeat", 1},
      {"configuration", configuration},
      {"pinned_commit", "any"},
      {"vm_shape", {{"vcpus", 1}, {"memory_mib", 1024}}},
      {"phases_s", {{"warmup", shape.warmup_s}, {"pressure", shape.pressure_s}, {"recovery", shape.recovery_s}}},
      {"cgroups", {{"parent", "harness"}, {"bg_memory_max_bytes", shape.bg_memory_max_mib * kMiB}}},
      {"backend",
       {{"zram_disksize_bytes", shape.zram_disksize_mib * kMiB},
        {"zram_algorithm", "lzo-rle"},
        {"zram_priority", 100},
        {"swapfile_path", "/var/lib/harness/swapfile"},
        {"swapfile_priority", 10}}},
      {"pressure",
       {{"allocation_bytes", shape.allocation_mib * kMiB},
        {"rate_mib_s", 64},
        {"active_set_bytes", shape.active_set_mib * kMiB},
        {"contents", "structured"},
        {"seed", 1}}},
      {"canaries",
       {{"period_ms", 100},
        {"compute_hot_bytes", 16 * kMiB},
        {"sqlite_db_path", "/var/lib/harness/canary.db"},
        {"sqlite_queries_per_request", 8},
        {"seed", 1}}},
  };
  if (!triplet_id.empty()) s["triplet_id"] = triplet_id;
  if (configuration == "bounded-reclaim") s["dose_bytes"] = 96 * kMiB;
  return s;
}

}  // namespace test_support
