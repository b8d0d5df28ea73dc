#pragma once
// reclaim_actions (results/schema.sql): each write to bg memory.reclaim (or memory.high) of a
// case and what it measured (docs/PROTOCOL.md "Achieved reclaim"). Counters in pages, sizes in
// bytes, times CLOCK_MONOTONIC ns of the guest.
//
// Errors: DbError on any SQLite failure.
#include "results/db.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace results {

/// One reclaim write.
struct ReclaimActionRow {
  using Opt = std::optional<std::int64_t>;
  std::int64_t requested_bytes = 0;
  std::int64_t start_ns = 0, end_ns = 0, duration_ns = 0;
  std::int64_t write_errno = 0;  ///< 0 = success; EAGAIN = partial / no progress
  Opt pgsteal_before, pgsteal_after, pgsteal_settled;  ///< bg memory.stat, pages
  Opt pgscan_before, pgscan_after, pgscan_settled;
  Opt bg_current_before_bytes, bg_current_after_bytes;
  Opt achieved_bytes;  ///< (counter after - before) x page size, across the write
  std::optional<std::string> achieved_counter;  ///< pgsteal_proactive | pgsteal
  Opt concurrent_estimate_bytes, achieved_conservative_bytes, achieved_settled_bytes;
  Opt write_cpu_us;  ///< version 4: CPU time of the writing thread in write(2), us
};

/// The writes of `case_id` in start order. A column of a later schema version than the file's
/// reads nullopt.
std::vector<ReclaimActionRow> read_reclaim_actions(Db& db, const std::string& case_id);

/// Writes of every case that returned an errno (write_errno != 0).
std::int64_t failed_reclaim_writes(Db& db);

/// Inserts the writes of `case_id`.
void insert_reclaim_actions(Db& db, const std::string& case_id, const std::vector<ReclaimActionRow>& rows);

}  // namespace results
