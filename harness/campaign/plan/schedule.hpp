#pragma once
// The schedule: the planned cases of a campaign in execution order (the preregistration).
// Source: docs/PROTOCOL.md "Design" and ours: seeded order, triplet order per VM and
// configuration order within each triplet randomized; its SHA-256 is stored with it and
// `harness run` refuses a schedule whose hash changed.
#include "harness/campaign/plan/allocation.hpp"
#include "harness/campaign/model/campaign.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace harness::campaign {

/// One planned case (one row of the campaign DB `schedule` table).
struct ScheduledCase {
  std::string case_id;        ///< <campaign>-<vm>-<regime>-r<repeat>[-d<dose>M]-<configuration>[-<variant>]
  int ordinal = 0;            ///< global order (0-based), VM-interleaved
  int vm_position = 0;        ///< position in its VM's sequence (0-based)
  std::string vm;
  std::string regime;
  int repeat = 1;             ///< 1-based repeat id within the (vm, regime) stratum
  std::optional<std::string> triplet_id;  ///< "<vm>/<regime>/<repeat>" (matched triplets)
  std::string configuration;  ///< the arm's name
  std::optional<std::int64_t> dose_bytes; ///< the arm that takes the design's dose only (model/dose.hpp)
  nlohmann::json spec;        ///< the full case spec (harness/case/SPEC.md)
};

/// A planned campaign: rows plus the canonical JSON text and its SHA-256 (hex).
struct Schedule {
  std::string campaign;
  std::uint64_t seed = 0;
  std::vector<ScheduledCase> cases;
  StratumSizes strata;     ///< triplets per (vm, regime) (matched-triplets; filled by plan() only)
  std::string json_text;   ///< canonical JSON (sorted keys, no whitespace) of everything planned
  std::string sha256_hex;  ///< SHA-256 of json_text: the preregistration hash
};

/// Plans `c`: deterministic for a given campaign (same seed -> same order, same hash).
/// Stratum sizes: `repeats` each, or the seeded balanced allocation of
/// triplets_per_regime (allocation.hpp). design.dose_mib {from_pilot} is resolved here
/// (pilot_dose.hpp; throws PilotDoseError; CampaignError naming design.dose_mib.from_pilot when
/// the chosen dose breaks the study arm's rule here, model/dose.hpp check_design_dose)
/// and the pilot DB's SHA-256 enters the JSON; the pilot campaign stored in that DB is
/// compared with `c` (pilot_match.hpp match_pilot: PilotDoseError on an undeclared
/// difference), and the declared differences that exist enter the JSON
/// (dose_from_pilot.accepted_differences, pilot_rule_dose_bytes; absent when none).
/// matched-triplets and matched-blocks: per VM, the (regime, repeat) blocks are shuffled, and
/// within each block the arm order; pilot: per VM, the (regime, dose, repeat) cases are
/// shuffled; ab-pairs: per VM, the (regime, repeat, configuration) blocks are shuffled, and
/// within each block the order of its two cases (baseline, candidate: a pair). ab-pairs case
/// ids end in -<variant>, triplet_id "<vm>/<regime>/<repeat>/<variant>". Shuffles use boost::random::mt19937_64 seeded from (seed, vm name) and
/// boost's uniform_int_distribution (portable across standard libraries).
Schedule plan(const Campaign& c);

/// Rebuilds a Schedule from its canonical JSON text (as stored in the DB) and recomputes
/// the hash. Throws std::runtime_error on malformed text.
Schedule schedule_from_json(const std::string& json_text);

/// The case spec of one schedule row (every SPEC.md field filled from the campaign). A study
/// arm listed by name is written without `policy` (its dose: `dose_bytes`); any other arm
/// with `policy: {name, params}`.
/// `variant` (ab-pairs only) adds spec.variant with `pair_id`
/// ("<vm>/<regime>/<repeat>/<configuration>"); nullptr leaves the spec without it.
nlohmann::json case_spec(const Campaign& c, const std::string& case_id, const std::string& vm,
                         const Regime& regime, int repeat, const std::optional<std::string>& triplet_id,
                         const Arm& arm, std::optional<std::int64_t> dose_bytes,
                         const Variant* variant = nullptr, const std::string& pair_id = "");

}  // namespace harness::campaign
