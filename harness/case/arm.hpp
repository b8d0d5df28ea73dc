#pragma once
// The arm a case runs: its name (spec `configuration`), its registered policy and the
// policy's parameters (policy.hpp). The canonical JSON written here is what a plan lists
// under `arms`, what the results DB's `arms` table stores (params_json) and what the arm's
// SHA-256 is taken over (harness/campaign: sha256 of arm_json(...).dump()).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "harness/case/spec.hpp"

namespace harness::case_ {

/// The policy an arm runs and its parameters (validated, defaults filled).
struct ResolvedArm {
  std::string policy;
  nlohmann::json params;
  bool in_spec = false;  ///< named by the spec's `policy` (else the study arm of that name)
};

/// The arm of a spec (SPEC.md "Arms"), from its `configuration`, its `policy` object (nullptr
/// when absent) and its `dose_bytes`: with `policy`, the registered policy it names with its
/// `params`; without, the study arm named by `configuration`, whose `dose_mib` parameter, when it
/// has one, is dose_bytes / MiB (an integer when whole). The one place a spec's arm is resolved:
/// parse_spec and the campaign DB's `arms` table (which reads plans whose build pin may not be
/// resolved yet) both call it. Throws SpecError naming the field ("policy.name",
/// "policy.params.interval_s", "configuration", "dose_bytes"); the message has no source prefix.
ResolvedArm resolve_arm(const std::string& configuration, const nlohmann::json* policy,
                        std::optional<std::int64_t> dose_bytes);

/// {"name": <configuration>, "params": <policy_params>, "policy": <policy>}: nlohmann's dump()
/// of it is canonical (keys sorted, no whitespace). For the study's bounded-reclaim the
/// params are {"dose_mib": <dose_bytes / MiB>} (an integer when the dose is whole MiB).
nlohmann::json arm_json(const CaseSpec& s);

}  // namespace harness::case_
