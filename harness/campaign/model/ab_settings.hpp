#pragma once
// Comparison settings of an A/B campaign (ours): what must be equal between a run
// and the stored baseline it is compared with (`harness check --baseline-db BASE`).
//
// The settings are the campaign's fields under their campaign-file paths (docs/CAMPAIGN.md),
// MINUS what may differ between the two runs: variants.candidate, regression.*, assertions,
// runner.* and name (and the file path and text themselves). Built from the Campaign struct
// (not from the YAML text), so that comments, key order and defaults written out or left
// implicit do not matter. Paths are dotted (`cgroups.bg_memory_max_mib`,
// `regimes[1].rate_mib_s`, `variants.baseline.sysctls.vm.swappiness`); lists of scalars
// are one value (`configurations`).
#include "harness/campaign/model/campaign.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace harness::campaign {

/// The comparison settings of `c` as a JSON object (nested by path component; unset
/// optional fields are null).
nlohmann::json comparison_settings(const Campaign& c);

/// SHA-256 (64 lowercase hex) of the canonical text of comparison_settings(c): sorted keys,
/// no whitespace (nlohmann dump()).
std::string comparison_settings_sha256(const Campaign& c);
/// Same, of a comparison_settings() object.
std::string settings_digest(const nlohmann::json& settings);

/// One setting that differs: its dotted path and the JSON text of each side ("(absent)"
/// when the path exists on one side only).
struct SettingDifference {
  std::string path;
  std::string ours, theirs;
};

/// The settings that differ between two comparison_settings() objects, by path, sorted.
/// Empty iff the digests are equal (for objects made by comparison_settings).
std::vector<SettingDifference> differing_settings(const nlohmann::json& ours, const nlohmann::json& theirs);

}  // namespace harness::campaign
