#pragma once
// The record of one bounded-reclaim action (one write of the dose to bg
// memory.reclaim) and its arithmetic. Columns: results/schema.sql reclaim_actions.
// Rules: docs/PROTOCOL.md "Achieved reclaim"; SPEC.md "Version 2 additions".
//
//   counter      = pgsteal_proactive when bg memory.stat has it (newer kernels count
//                  memory.reclaim work there), else pgsteal (6.1: memory.reclaim work is in
//                  pgsteal/pgsteal_direct, together with limit reclaim in bg).
//   achieved     = (counter_after - counter_before) x page size: across the write itself
//                  (before = just before write(2), after = right after it returned).
//   concurrent   = bg pgsteal rate over the last 3 telemetry windows before the trigger
//                  x write duration: floor(d_pages x page x duration_ns / d_ns), bytes;
//                  0 when the counter is pgsteal_proactive (limit reclaim is not in it).
//   conservative = max(0, achieved - concurrent): the figure the pilot rule and CI use.
//   settled      = (pgsteal_settled - pgsteal_before) x page size, pgsteal_settled read
//                  ~2.2 s after the write (memcg stats flush every ~2 s; the v1 figure).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case/run/telemetry_sample.hpp"

namespace harness::case_ {

/// bg pgsteal growth over the windows before the trigger (concurrent limit reclaim).
struct PgstealRate {
  std::int64_t pages = 0;      ///< pgsteal growth, pages
  std::int64_t window_ns = 0;  ///< over this long (read_ns of the last - of the first sample), ns
  int windows = 0;             ///< windows it spans
};

/// Rate over the last `windows` windows of `samples` (the last windows+1 samples, in
/// order; the last one = the trigger tick's). nullopt when fewer samples, a pgsteal or
/// read_ns is missing, or the span is not positive. read_ns falls back to t_ns.
std::optional<PgstealRate> pgsteal_rate_before(const std::vector<TelemetrySample>& samples, int windows = 3);

/// What one write measured directly: the reclaim_actions columns that the record below and
/// the stored row (bundle.hpp ReclaimRow) both carry, so the row takes them in one copy.
struct ReclaimReadings {
  std::int64_t requested_bytes = 0;
  std::int64_t start_ns = 0;  ///< CLOCK_MONOTONIC ns just before write(2)
  std::int64_t end_ns = 0;    ///< CLOCK_MONOTONIC ns just after write(2) returned
  int write_errno = 0;        ///< 0 = success; EAGAIN = partial / no progress; EINTR; ...
  std::optional<std::int64_t> pgsteal_before, pgsteal_after, pgsteal_settled;  ///< pages
  std::optional<std::int64_t> pgscan_before, pgscan_after, pgscan_settled;     ///< pages
  std::optional<std::int64_t> bg_current_before_bytes, bg_current_after_bytes;  ///< bytes
};

/// The readings plus the counter the achieved figure uses; the arithmetic of the header comment.
struct ReclaimRecord : ReclaimReadings {
  std::string counter = "pgsteal";  ///< pgsteal_proactive | pgsteal
  std::optional<std::int64_t> counter_before, counter_after;  ///< that counter, pages
  std::optional<PgstealRate> concurrent_rate;  ///< bg pgsteal before the trigger (pgsteal counter only)
  std::optional<std::int64_t> write_cpu_ns;    ///< CPU time of the writing thread during write(2), ns

  /// end_ns - start_ns, ns.
  std::int64_t duration_ns() const { return end_ns - start_ns; }
  /// (counter_after - counter_before) x page size, bytes; nullopt when a reading is
  /// missing (NULL = not measured, never 0). Throws std::invalid_argument if page <= 0.
  std::optional<std::int64_t> achieved_bytes(std::int64_t page_size_bytes) const;
  /// Concurrent limit reclaim estimate, bytes (0 with pgsteal_proactive; nullopt when the
  /// counter is pgsteal and no rate is known).
  std::optional<std::int64_t> concurrent_estimate_bytes(std::int64_t page_size_bytes) const;
  /// max(0, achieved - concurrent estimate), bytes; nullopt when either is unknown.
  std::optional<std::int64_t> achieved_conservative_bytes(std::int64_t page_size_bytes) const;
  /// (pgsteal_settled - pgsteal_before) x page size, bytes (the v1 figure).
  std::optional<std::int64_t> achieved_settled_bytes(std::int64_t page_size_bytes) const;
  /// achieved_conservative / requested (study's pilot rule wants >= 0.8); nullopt if unknown.
  std::optional<double> achieved_ratio(std::int64_t page_size_bytes) const;
  /// bg memory.current before - after, bytes (positive = it dropped); nullopt if unknown.
  std::optional<std::int64_t> current_drop_bytes() const;
  /// Outcome class: "ok" (errno 0 and conservative achieved >= requested or unknown),
  /// "partial" (errno EAGAIN, or conservative achieved < requested), "error" (other errno).
  const char* outcome(std::int64_t page_size_bytes) const;
  /// Every field plus the derived values, for outcome_json.
  nlohmann::json to_json(std::int64_t page_size_bytes) const;
};

}  // namespace harness::case_
