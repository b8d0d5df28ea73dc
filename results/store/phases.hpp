#pragma once
// phases (results/schema.sql): a case's phase boundaries, CLOCK_MONOTONIC ns of the guest.
//
// Errors: DbError on any SQLite failure.
#include "results/db.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace results {

/// One phase of a case.
struct PhaseRow {
  std::string phase;  ///< warmup | pressure | recovery | restoration
  std::int64_t start_ns = 0;
  std::optional<std::int64_t> end_ns;  ///< nullopt: the phase did not end
};

/// The phases of `case_id` (key order: by phase name).
std::vector<PhaseRow> read_phases(Db& db, const std::string& case_id);

/// The phase `phase` of `case_id`; nullopt when it has none.
std::optional<PhaseRow> read_phase(Db& db, const std::string& case_id, const std::string& phase);

/// Inserts `phases` of `case_id`.
void insert_phases(Db& db, const std::string& case_id, const std::vector<PhaseRow>& phases);

}  // namespace results
