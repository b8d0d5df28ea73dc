#pragma once
// `design.dose_mib: {from_pilot: PATH}`: the confirmatory dose chosen at plan time by the
// pilot rule over a pilot campaign DB (study: "The pilot selected the reclaim amount before
// the confirmatory schedule was generated"; PROTOCOL.md "Pilot rule, to the letter").
// The rule itself is the analysis library's (analysis/tables/pilot.hpp, analysis::select_dose).
#include "analysis/tables/pilot.hpp"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace harness::campaign {

/// The pilot DB has no eligible dose, or cannot be read as a pilot DB.
class PilotDoseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The dose a pilot DB selects, and what identifies that DB.
struct PilotDose {
  std::int64_t dose_bytes = 0;  ///< largest eligible request, bytes
  std::string sha256_hex;       ///< SHA-256 of the pilot DB file's bytes (preregistered with the plan)
  /// Evaluated pilot cases per cases.accelerator (kvm | tcg | real | unknown).
  std::map<std::string, int> accelerators;
  /// True when any pilot case ran under TCG (the duration criterion is then meaningless).
  bool ran_under_tcg() const { return accelerators.count("tcg") > 0; }
};

/// Opens `pilot_db` read-only, runs analysis::select_dose with `rule` (the confirmatory
/// campaign's `eligibility` section: thresholds in seconds and as an achieved/requested
/// ratio, study defaults 1 s and 0.8, and the reading, default clean / interface-error) and
/// returns the chosen dose with the file's hash.
/// Throws PilotDoseError naming the file when it is missing, not a pilot DB, or has no
/// eligible dose (listing each dose's failed criteria), and, unless `pipeline_test`, when
/// any pilot case ran under TCG (ours: the study's 1 s duration criterion says nothing
/// under software emulation, so such a dose must not be preregistered; the message names
/// `harness plan --pipeline-test-dose` for a pipeline test).
PilotDose resolve_pilot_dose(const std::string& pilot_db, const analysis::PilotRule& rule, bool pipeline_test = false);

}  // namespace harness::campaign
