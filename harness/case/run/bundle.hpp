#pragma once
// The case bundle: everything one case produced, written once at the end into a fresh
// SQLite file in the results schema (results/schema.sql) through the store (results/store/),
// in one transaction. Used for completed and infra_failed cases alike (an infra_failed bundle
// may have no phases, telemetry or requests).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case/control/reclaim_record.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/case/run/telemetry_sample.hpp"
#include "results/store/canary_requests.hpp"
#include "results/store/phases.hpp"

namespace harness::case_ {

/// A phase boundary pair, CLOCK_MONOTONIC ns (end absent when the phase did not finish): the
/// store's row of table phases (results/store/phases.hpp).
using PhaseRecord = results::PhaseRow;

/// One controller_events row (one per window; one per trigger/action/backend event).
struct ControllerEvent {
  std::int64_t t_ns = 0;
  std::string kind;  ///< window | trigger | would_trigger | backend_on | reclaim_start | reclaim_end | error
  std::optional<std::int64_t> some_total_us, delta_us;
  std::optional<int> counting, consecutive;
  nlohmann::json detail;  ///< null or an object
  std::optional<std::int64_t> window_ns = std::nullopt;  ///< window rows: real length read_ns - previous read_ns, ns
  std::optional<int> irregular = std::nullopt;  ///< window rows: 1 = outside [0.9, 1.1] x window (not judged)
};

/// One canary_requests row (canaries/TRACE.md; ns are CLOCK_MONOTONIC of the guest): the
/// store's row (results/store/canary_requests.hpp).
using CanaryRequestRow = results::CanaryRequestRow;

/// One reclaim_actions row: the write's readings plus the figures ReclaimRecord computes
/// (reclaim_record.hpp), bytes.
struct ReclaimRow : ReclaimReadings {
  std::optional<std::int64_t> achieved_bytes;
  std::optional<std::string> achieved_counter;  ///< pgsteal_proactive | pgsteal
  std::optional<std::int64_t> concurrent_estimate_bytes, achieved_conservative_bytes, achieved_settled_bytes;
  std::optional<std::int64_t> write_cpu_us;  ///< CPU time of the writing thread in write(2), us
};

/// The restoration row: clean = verified (no swap in use, cgroups gone, no stray pids).
struct RestorationRow {
  std::int64_t start_ns = 0, end_ns = 0;
  bool clean = false;
  nlohmann::json detail;
};

/// All rows of one case. `cases` columns are the scalar members below.
struct CaseBundle {
  std::string case_id, campaign, vm, regime;
  std::int64_t repeat = 0;
  std::optional<std::string> triplet_id;
  std::string configuration;  ///< the arm's name (spec `configuration`; harness/case/control/arm.hpp)
  std::optional<std::int64_t> dose_bytes;
  std::int64_t attempt = 1;
  std::string status;  ///< completed | infra_failed | lost (executor.hpp classify)
  std::optional<std::string> error;
  std::optional<std::string> accelerator, kernel_release, source_commit;
  std::optional<std::int64_t> source_dirty;  ///< 1 = the build had uncommitted changes
  std::optional<std::int64_t> page_size_bytes, started_unix_ns, ended_unix_ns;
  std::string spec_json;
  std::optional<std::string> environment_json, qualification_json, outcome_json;

  std::vector<PhaseRecord> phases;
  std::vector<CanaryRequestRow> requests;
  std::vector<TelemetrySample> telemetry;
  std::vector<ControllerEvent> events;
  std::vector<ReclaimRow> reclaims;
  std::optional<RestorationRow> restoration;
  std::vector<std::pair<std::string, std::string>> artifacts;  ///< (name, content)
};

/// Fills the `cases` columns that the spec and the build decide: ids, configuration, dose,
/// attempt, spec_json (the document as given), source commit and dirty flag.
void fill_case_row(CaseBundle& b, const CaseSpec& spec, int attempt);

/// Writes `b` to a new SQLite file at `path` (an existing file, and its -wal/-shm, is
/// replaced) with results::Db(Mode::Create), all rows in one transaction.
/// Throws results::DbError (names file and statement) or std::runtime_error.
void write_bundle(const std::string& path, const CaseBundle& b);

}  // namespace harness::case_
