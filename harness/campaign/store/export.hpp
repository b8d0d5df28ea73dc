#pragma once
// `harness export DB --format csv`: tidy CSV tables (one row per observation, one column
// per variable, header row, NULL as empty field) for R (readr) and pandas.
#include "results/db.hpp"
#include "results/provenance.hpp"

#include <string>
#include <vector>

namespace harness::campaign {

/// Writes OUT_DIR/<table>.csv for schedule, attempts, cases, phases, canary_requests
/// (plus derived wake_delay_ns, service_ns, response_ns, deadline_miss), telemetry,
/// controller_events, reclaim_actions, restoration. Column names are the schema's
/// (results/schema.sql: snake_case with the unit as suffix, e.g. scheduled_ns, bg_some_us).
/// RFC 4180 quoting (results/csv.hpp). With `provenance`, each <table>.csv gets a <table>.csv.meta.json sidecar
/// (results::write_sidecar). Returns the CSV files written. Throws std::runtime_error naming
/// the file on a write error.
std::vector<std::string> export_csv(results::Db& db, const std::string& out_dir,
                                    const results::Provenance* provenance = nullptr);

}  // namespace harness::campaign
