#pragma once
// Pilot dose selection (`harness pilot-select`): Table 3 and the predefined rule (study; DESIGN.md
// "Analysis"): a dose is eligible iff all its memory.reclaim requests finished within 1 s, produced
// no OOM or interface error, achieved >= 80% of the request (pgsteal x page size), and left valid
// backend and restoration telemetry; the largest eligible dose is chosen.
#include "analysis/report_table.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// Thresholds of the rule (study values as defaults).
struct PilotRule {
  double max_duration_s = 1.0;
  double min_achieved_ratio = 0.8;
};

/// One dose's pilot outcome.
struct DoseResult {
  std::int64_t dose_bytes = 0;
  int cases = 0;                              ///< completed bounded-reclaim cases with this dose
  int requests = 0;                           ///< reclaim_actions rows
  std::optional<double> worst_duration_s;     ///< max duration_ns / 1e9
  std::optional<double> min_achieved_ratio;   ///< min achieved_bytes / requested_bytes
  int eagain = 0;                             ///< writes that returned EAGAIN (partial / no progress)
  bool eligible = false;
  std::vector<std::string> failed;            ///< failed criteria, each naming the case
};

/// Result of pilot selection.
struct PilotResult {
  std::vector<DoseResult> doses;              ///< ascending dose
  std::optional<std::int64_t> chosen_bytes;   ///< largest eligible dose, if any
  std::vector<std::string> warnings;          ///< infra_failed cases, unequal case counts, TCG
  PilotRule rule;                             ///< thresholds applied
};

/// Evaluates every dose of the completed bounded-reclaim cases in `db_path`.
/// Errors: results::DbError; std::invalid_argument when the DB has no bounded-reclaim case with a dose.
PilotResult select_dose(const std::string& db_path, const PilotRule& rule = {});

/// Report with Table 3 and the chosen dose in words.
Report pilot_report(const std::string& db_path, const PilotResult& r);

}  // namespace analysis
