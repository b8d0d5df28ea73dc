#pragma once
// restoration (results/schema.sql): how a case's host was put back (processes stopped, swapoff,
// zram reset, cgroups removed), CLOCK_MONOTONIC ns of the guest.
//
// Errors: DbError on any SQLite failure.
#include "results/db.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace results {

/// The restoration row of a case.
struct RestorationRow {
  std::int64_t start_ns = 0, end_ns = 0;
  std::int64_t clean = 0;  ///< 1 = verified: no swap in use, cgroups gone, no stray pids
  std::optional<std::string> detail_json;  ///< per step: duration, errno, what was found
};

/// The restoration of `case_id`; nullopt when it has none (the case ended before it set
/// anything up) or the file has no restoration table.
std::optional<RestorationRow> read_restoration(Db& db, const std::string& case_id);

/// Inserts the restoration of `case_id`.
void insert_restoration(Db& db, const std::string& case_id, const RestorationRow& r);

}  // namespace results
