#pragma once
// The tables `harness export` writes as CSV (harness/campaign/store/export.hpp), as the
// store reads them: every column of schedule, attempts, phases, telemetry, controller_events,
// reclaim_actions and restoration; cases without its large JSON records; canary_requests with the
// study's derived columns (wake_delay_ns = wake - scheduled, service_ns = completion - wake,
// response_ns = completion - scheduled, deadline_miss = not completed or completion later than
// the next scheduled start, and the phase each request was scheduled in).
//
// Errors: DbError on any SQLite failure (a file without one of the tables included).
#include "results/db.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace results {

/// The exported tables' names, in the order they are written.
std::vector<std::string> export_table_names();

/// Reads exported table `name` (one of export_table_names()): `header` once with its column
/// names, then `row` with each row's cells as SQLite's text of the value (nullopt = NULL), in
/// the table's order (by case id, then time or sequence). Throws std::invalid_argument for
/// another name.
void read_export_table(Db& db, const std::string& name,
                       const std::function<void(const std::vector<std::string>& columns)>& header,
                       const std::function<void(const std::vector<std::optional<std::string>>& cells)>& row);

}  // namespace results
