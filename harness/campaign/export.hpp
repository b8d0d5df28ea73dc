#pragma once
// `harness export DB --format csv`: tidy CSV tables (one row per observation, one column
// per variable, header row, NULL as empty field) for R (readr) and pandas.
#include "results/db.hpp"

#include <string>
#include <vector>

namespace harness::campaign {

/// Writes OUT_DIR/<table>.csv for schedule, attempts, cases, phases, canary_requests
/// (plus derived wake_delay_ns, service_ns, response_ns, deadline_miss), telemetry,
/// controller_events, reclaim_actions, restoration. RFC 4180 quoting (results/csv.hpp). Returns the files
/// written. Throws std::runtime_error naming the file on a write error.
std::vector<std::string> export_csv(results::Db& db, const std::string& out_dir);

}  // namespace harness::campaign
