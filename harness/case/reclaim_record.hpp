#pragma once
// The record of one bounded-reclaim action (one write of the dose to bg
// memory.reclaim) and its arithmetic. Columns: results/schema.sql reclaim_actions.
//
// achieved_bytes = (pgsteal_settled - pgsteal_before) * page size (study: "achieved ...
// computed as pgsteal times the page size"). Caveat (DESIGN.md): bg pgsteal also counts
// reclaim done concurrently by the bg memory.max limit, so achieved_bytes is an upper
// bound of what the write itself reclaimed; bg memory.current before/after is kept so
// a report can show both. `settled` readings are taken ~2 s after the write returned
// because memcg statistics are flushed about every 2 s (DESIGN.md, kernel 6.1).
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace hcase {

struct ReclaimRecord {
  std::int64_t requested_bytes = 0;
  std::int64_t start_ns = 0;  ///< CLOCK_MONOTONIC ns just before write(2)
  std::int64_t end_ns = 0;    ///< CLOCK_MONOTONIC ns just after write(2) returned
  int write_errno = 0;        ///< 0 = success; EAGAIN = partial / no progress; EINTR; ...
  std::optional<std::int64_t> pgsteal_before, pgsteal_after, pgsteal_settled;  ///< pages
  std::optional<std::int64_t> pgscan_before, pgscan_after, pgscan_settled;     ///< pages
  std::optional<std::int64_t> bg_current_before_bytes, bg_current_after_bytes;

  /// end_ns - start_ns, ns.
  std::int64_t duration_ns() const { return end_ns - start_ns; }
  /// (pgsteal_settled - pgsteal_before) * page_size_bytes; nullopt when either reading is
  /// missing (NULL = not measured, never 0). Throws std::invalid_argument if page_size <= 0.
  std::optional<std::int64_t> achieved_bytes(std::int64_t page_size_bytes) const;
  /// achieved_bytes / requested_bytes (study's pilot rule wants >= 0.8); nullopt if unknown.
  std::optional<double> achieved_ratio(std::int64_t page_size_bytes) const;
  /// bg memory.current before - after, bytes (positive = it dropped); nullopt if unknown.
  std::optional<std::int64_t> current_drop_bytes() const;
  /// Outcome class: "ok" (errno 0 and achieved >= requested or unknown), "partial"
  /// (errno EAGAIN, or achieved < requested), "error" (any other errno).
  const char* outcome(std::int64_t page_size_bytes) const;
  /// Every field plus the derived values, for outcome_json.
  nlohmann::json to_json(std::int64_t page_size_bytes) const;
};

}  // namespace hcase
