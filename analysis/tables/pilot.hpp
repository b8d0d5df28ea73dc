#pragma once
// Pilot dose selection (`harness pilot-select`): Table 3 and the predefined rule, to the letter
// (study; docs/PROTOCOL.md "Pilot rule, to the letter"): a dose is eligible iff, for every one of
// the campaign's regimes, exactly one completed case exists, and every memory.reclaim write
// finished within 1 s, produced no OOM kill or interface error, achieved >= 80% of the request
// (pgsteal x page size across the write, the study's figure; the conservative figure,
// achieved_conservative_bytes, excluding the estimated limit reclaim beside the write, is
// reported and never judged), and left valid backend and restoration telemetry. A dose missing a
// regime is "incomplete, not eligible". The largest eligible dose is chosen. Two phrases are
// read as the campaign's `eligibility` section says (pilot_reading.hpp); the dose every other
// reading would choose is reported beside Table 3.
#include "analysis/data/pilot_reading.hpp"
#include "analysis/tables/table.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// Thresholds of the rule (study values as defaults) and its reading of two phrases.
struct PilotRule {
  double max_duration_s = 1.0;
  double min_achieved_ratio = 0.8;
  PilotReading reading;  ///< how "valid restoration telemetry" and EAGAIN are read
};

/// One dose's pilot outcome.
struct DoseResult {
  std::int64_t dose_bytes = 0;
  int cases = 0;                              ///< completed bounded-reclaim cases with this dose
  int regimes_complete = 0;                   ///< campaign regimes with exactly one completed case
  int regimes_expected = 0;                   ///< the campaign's regimes (schedule and cases)
  bool incomplete = false;                    ///< a regime without exactly one completed case: not eligible
  int requests = 0;                           ///< reclaim_actions rows
  std::optional<double> worst_duration_s;     ///< max duration_ns / 1e9, s
  std::optional<double> min_achieved_ratio;   ///< min achieved_bytes / requested_bytes (across the write): judged
  std::optional<double> min_conservative_ratio;  ///< min achieved_conservative_bytes / requested_bytes: reported
  int eagain = 0;                             ///< writes that returned EAGAIN (partial reclaim)
  bool eligible = false;                      ///< under the rule's reading
  std::vector<std::string> failed;            ///< failed criteria under the rule's reading, each naming the case
  /// Findings the rule's reading does not count and another reading does (e.g. EAGAIN under
  /// `eagain: partial-reclaim`, a MemAvailable shortfall under `restoration: case-teardown`).
  std::vector<std::string> set_aside;
};

/// The dose one reading of the rule chooses (the same thresholds, the same cases).
struct ReadingChoice {
  PilotReading reading;
  std::vector<std::int64_t> eligible_bytes;   ///< eligible doses under this reading, ascending
  std::optional<std::int64_t> chosen_bytes;   ///< the largest of them
};

/// Result of pilot selection.
struct PilotResult {
  std::vector<DoseResult> doses;              ///< ascending dose
  std::optional<std::int64_t> chosen_bytes;   ///< largest eligible dose, if any
  std::vector<std::string> warnings;          ///< infra_failed cases, unequal case counts, TCG
  PilotRule rule;                             ///< thresholds and reading applied
  /// Every reading (all_pilot_readings(): four), the rule's own among them.
  std::vector<ReadingChoice> readings;
  /// Evaluated cases per cases.accelerator ("unknown" when NULL): kvm | tcg | real | unknown.
  std::map<std::string, int> accelerators;
  /// The duration criterion (every write within max_duration_s) is meaningless when any
  /// case ran under TCG: software emulation inflates the write's wall time, so neither an
  /// eligible nor an ineligible verdict on it says anything about a real VM (ours; docs/OUTPUTS.md
  /// "make timing claims only from KVM or real VMs"). False then.
  bool duration_criterion_valid() const { return accelerators.count("tcg") == 0; }
};

/// The arm the pilot runs and whose doses it judges: the study's treatment, bounded reclaim
/// (docs/PROTOCOL.md "Pilot rule"; data/study_facts.hpp kStudyArms). The one place the
/// pilot's arm is named: select_dose and the pilot-match rule (harness/campaign/plan/pilot_match.hpp).
const char* pilot_arm();

/// Evaluates every dose of the completed bounded-reclaim cases in `db_path`.
/// Errors: results::DbError; std::invalid_argument (the CLI exits 2) when the DB is not a pilot DB
/// (campaign YAML design.kind other than "pilot", or a case with a triplet_id) or has no
/// bounded-reclaim case with a dose.
PilotResult select_dose(const std::string& db_path, const PilotRule& rule = {});

/// Report with Table 3 and the chosen dose in words. When duration_criterion_valid() is
/// false the summary, Table 3's notes and extra["duration_criterion"] ({valid, accelerators,
/// statement}) say plainly that the duration criterion, and so the chosen dose, carry no
/// timing claim.
Report pilot_report(const std::string& db_path, const PilotResult& r);

}  // namespace analysis
