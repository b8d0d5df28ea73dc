#pragma once
// The case spec: the parsed, validated form of harness/case/SPEC.md (the contract
// between the campaign runner, the agent and the executor).
//
// parse_spec() checks every rule of SPEC.md before anything is created on the host;
// a malformed or impossible spec throws SpecError naming the field (JSON pointer
// style, e.g. "phases_s.pressure") and the source (file name).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/case/spec/safe_path.hpp"
#include "harness/case/spec/spec_error.hpp"
#include "harness/case/spec/variant.hpp"
#include "harness/error/expected.hpp"

namespace harness::case_ {

/// Whether `name` can be an arm's name (the spec's `configuration`), or the Problem. Rule (ours):
/// [a-z][a-z0-9-]{0,39}: it ends case ids and names a column of the report.
Checked check_arm_name(const std::string& name);

/// Phase lengths, seconds (each > 0).
struct PhasesSpec {
  std::int64_t warmup_s = 0;
  std::int64_t pressure_s = 0;
  std::int64_t recovery_s = 0;
};

/// The harness-owned parent cgroup and the limits of its two children bg/ and fg/.
struct CgroupsSpec {
  std::string parent;  ///< one path component under the cgroup2 root, e.g. "harness"
  /// bg memory.max, bytes; nullopt = "max" (no limit: a cold-memory regime, where nothing but
  /// a proactive policy reclaims; the spec says null, SPEC.md).
  std::optional<std::int64_t> bg_memory_max_bytes;
  std::optional<std::int64_t> bg_memory_high_bytes;  ///< absent = "max"
  std::optional<std::int64_t> fg_memory_max_bytes;   ///< absent = "max"
  std::optional<std::int64_t> fg_memory_low_bytes;   ///< absent = not set
};

/// The swapfile in delayed-activation before the trigger (ours: the study says only that
/// the configuration "began with that backend inactive", of zram; campaigns/README.md
/// Table 1). Active: swapped on at the start as in every configuration (pressure before the
/// trigger goes to the disk swap). Off: no swap at all before the trigger; the swapfile is
/// swapped on at the trigger, right after zram. Other configurations ignore it.
enum class DelayedSwapfile { Active, Off };
/// "active" | "off".
const char* to_string(DelayedSwapfile v);

/// zram (the backend, high priority) and the low-priority swapfile (every configuration).
struct BackendSpec {
  std::int64_t zram_disksize_bytes = 0;
  std::string zram_algorithm;
  int zram_priority = 100;  ///< swapon(2) priority 0..32767, higher is used first
  std::string swapfile_path;
  int swapfile_priority = 10;
  /// spec backend.delayed_swapfile; absent = Active (today's behaviour, so plans without
  /// the key keep their hash).
  DelayedSwapfile delayed_swapfile = DelayedSwapfile::Active;
};

/// Default of pressure.active_set_slide_mib_s, MiB/s: chosen by `harness calibrate`
/// (static-zram swap-out and refaults closest to the study's medians; campaigns/README.md).
inline constexpr double kDefaultActiveSetSlideMibS = 0.34;

/// pressure-gen settings (runs in bg during the pressure phase only).
struct PressureSpec {
  std::int64_t allocation_bytes = 0;  ///< whole MiB (pressure-gen takes MiB)
  double rate_mib_s = 0;              ///< MiB/s
  std::int64_t active_set_bytes = 0;  ///< whole MiB
  /// Speed of the active window through the allocation, MiB/s (SPEC.md v2; 0 = the first
  /// active_set bytes, the v1 behaviour). Default kDefaultActiveSetSlideMibS.
  double active_set_slide_mib_s = 0;
  std::string contents;               ///< structured | random
  std::uint64_t seed = 0;
};

/// Canary settings (both canaries run in fg through warmup, pressure and recovery).
struct CanariesSpec {
  int period_ms = 100;
  std::int64_t compute_hot_bytes = 0;  ///< whole MiB
  std::string sqlite_db_path;
  int sqlite_queries_per_request = 8;
  int sqlite_offset_ms = 50;  ///< SQLite canary origin = T0 + this, ms (SPEC.md v2: no shared wake-up)
  std::uint64_t seed = 0;
};

/// The PSI trigger (study: bg `some` total grows >= 1 ms in each of 3 consecutive 1 s windows).
struct TriggerSpec {
  int window_ms = 1000;
  std::int64_t min_increase_us = 1000;
  int consecutive_windows = 3;
};

/// One case, as run.
struct CaseSpec {
  std::string case_id;
  std::string campaign;
  std::string vm;
  std::string regime;
  std::int64_t repeat = 0;
  std::optional<std::string> triplet_id;  ///< the matched block (triplet for the study's three arms)
  /// The arm's name (spec `configuration`): one of the study's three (static-zram,
  /// delayed-activation, bounded-reclaim) or an arm the campaign declared.
  std::string configuration;
  std::optional<std::int64_t> dose_bytes;  ///< the study's bounded-reclaim: its memory.reclaim request
  /// The registered policy the arm runs (policy.hpp) and its parameters, validated with
  /// defaults filled. Spec `policy: {name, params}`; absent in the spec = the study arm named
  /// by `configuration` with its defaults, `dose_bytes` as its `dose_mib` (policy_in_spec false).
  std::string policy;
  nlohmann::json policy_params = nlohmann::json::object();
  bool policy_in_spec = false;  ///< the spec carried `policy` (the writer writes it back only then)
  std::string pinned_commit;               ///< 40 hex or "any"
  int vm_vcpus = 1;
  int vm_memory_mib = 1024;
  PhasesSpec phases;
  CgroupsSpec cgroups;
  BackendSpec backend;
  PressureSpec pressure;
  CanariesSpec canaries;
  TriggerSpec trigger;
  int telemetry_period_ms = 1000;  ///< must equal trigger.window_ms (shared samples)
  int telemetry_offset_ms = 25;    ///< ticks at T0 + offset + k x period, ms (SPEC.md v2)
  int restoration_timeout_s = 120;
  std::optional<VariantSpec> variant;  ///< A/B campaigns only (SPEC.md "variant"; variant.hpp)
  nlohmann::json raw;  ///< the document as given (stored in cases.spec_json)
};

/// Parses and validates a spec document. `source` names the input in errors (file path).
/// Throws SpecError (field named) on malformed JSON, wrong types, unknown fields,
/// missing required fields or any impossible value (SPEC.md "Rules").
CaseSpec parse_spec(const std::string& text, const std::string& source);

/// Reads `path` and parse_spec()s it. Throws SpecError when unreadable.
CaseSpec load_spec_file(const std::string& path);

/// True when `id` matches [A-Za-z0-9._-]{1,128} and is not "." or ".." (SPEC.md).
bool valid_case_id(const std::string& id);

/// Whether `name` can be the case's parent cgroup (cgroups.parent), or the Problem. Rule (ours):
/// exactly "harness" or "harness-<suffix>" with a suffix of [A-Za-z0-9_-]{1,56}: a child of
/// the cgroup2 root that only the harness creates. The executor writes cgroup.kill into the
/// parent and removes it (leftovers at a case's start, restoration at its end), so an
/// existing cgroup such as system.slice, user.slice or init.scope would lose every process
/// in it, the agent included. Shared by parse_spec and the campaign loader.
Checked check_cgroup_parent(const std::string& name);

}  // namespace harness::case_
