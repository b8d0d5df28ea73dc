#pragma once
// "Left valid backend telemetry" (study, pilot rule) made checkable (docs/PROTOCOL.md "Pilot
// rule, to the letter"; the thresholds are ours and listed in campaigns/README.md Table 1):
//  1. zram samples throughout the pressure phase: every 1 Hz telemetry sample in
//     [pressure start, pressure end] carries the zram mm_stat columns (zram_orig_data_bytes
//     not NULL), and no stretch of the phase (from its start to the first sample, between two
//     samples, from the last sample to its end) is longer than 2 telemetry periods
//     (spec telemetry_period_ms, default 1000 ms);
//  2. the device active when the configuration says: static-zram and bounded-reclaim swapped
//     it on before the case began (outcome_json.setup_steps holds "swapon <zram device> ..."
//     with errno 0); delayed-activation swapped it on once after the trigger (a controller
//     `backend_on` event at or after the `trigger` event whose step errno is 0).
// The restoration verdict is judged beside it (restoration.clean = 1).
#include "analysis/data/case_summary.hpp"
#include "results/db.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace analysis {

/// Largest stretch of the pressure phase without a zram sample, in telemetry periods (ours).
inline constexpr double kMaxZramGapPeriods = 2.0;

/// The findings against case `case_id`'s backend telemetry (none: valid), each one sentence
/// naming the column, event or key: a value the pilot table shows its reader (a case's
/// eligibility), not a failure of this function. `outcome_json` / `spec`: the case's parsed
/// cases.outcome_json and cases.spec_json (null when absent). Errors: results::DbError.
/// When the arm's zram device is due active: swapped on in setup (the study's static zram and
/// bounded reclaim), or swapped on once after the trigger (its delayed activation).
enum class ZramDue { InSetup, AfterTrigger };
std::vector<std::string> backend_telemetry_findings(results::Db& db, const std::string& case_id, ZramDue due,
                                                    const nlohmann::json& outcome_json, const nlohmann::json& spec);

}  // namespace analysis
