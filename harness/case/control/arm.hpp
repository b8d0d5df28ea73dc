#pragma once
// The arm a case runs: its name (spec `configuration`), its registered policy and the
// policy's parameters (policy.hpp). The canonical JSON written here is what a plan lists
// under `arms`, what the results DB's `arms` table stores (params_json) and what the arm's
// SHA-256 is taken over (harness/campaign: sha256 of arm_json(...).dump()).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "harness/case/spec/spec_error.hpp"

namespace harness::case_ {

struct PolicyInfo;  // policy.hpp

/// The policy an arm runs and its parameters (validated, defaults filled).
struct ResolvedArm {
  std::string policy;
  nlohmann::json params;
  bool in_spec = false;     ///< named by the spec's `policy` (else the study arm of that name)
  bool takes_dose = false;  ///< takes the design's dose (takes_design_dose): its dose_mib is dose_bytes'
};

/// Whether an arm takes the design's dose (SPEC.md "Arms"; study): a study arm, named by its
/// `configuration` alone (`study_arm`: no `policy` object in its spec, listed by name in its
/// campaign), whose policy has a `dose_mib` parameter (the study's bounded-reclaim). Such an
/// arm's dose travels as the spec's dose_bytes; every other arm carries its own parameters.
/// The one place this is decided: resolve_arm, parse_spec's bg-limit rule and the campaign's
/// dose rule (harness/campaign/model/dose.hpp) ask it.
bool takes_design_dose(const PolicyInfo& policy, bool study_arm);

/// The design's dose from MiB (a campaign's design.dose_mib, a pilot's doses) to bytes, as the
/// plan and the spec carry it (dose_bytes), and back to the policy's `dose_mib` parameter:
/// MiB, an integer when the dose is whole MiB (so an arm's canonical JSON reads as a campaign
/// writes it). The one conversion of the dose between its two units.
std::int64_t dose_bytes_of_mib(std::int64_t mib);
nlohmann::json dose_mib_of_bytes(std::int64_t bytes);

/// The arm of a spec (SPEC.md "Arms"), from its `configuration`, its `policy` object (nullptr
/// when absent) and its `dose_bytes`: with `policy`, the registered policy it names with its
/// `params`; without, the study arm named by `configuration`, whose `dose_mib` parameter, when it
/// takes the design's dose, is dose_mib_of_bytes(dose_bytes). The one place a spec's arm is
/// resolved: parse_spec and the campaign DB's `arms` table (which reads plans whose build pin
/// may not be resolved yet) both call it. Throws SpecError naming the field ("policy.name",
/// "policy.params.interval_s", "configuration", "dose_bytes"); the message has no source prefix.
ResolvedArm resolve_arm(const std::string& configuration, const nlohmann::json* policy,
                        std::optional<std::int64_t> dose_bytes);

/// {"name": `name` (the spec's configuration), "params": `params`, "policy": `policy`}:
/// nlohmann's dump() of it is canonical (keys sorted, no whitespace). For the study's
/// bounded-reclaim the params are {"dose_mib": dose_mib_of_bytes(dose_bytes)}.
nlohmann::json arm_json(const std::string& name, const std::string& policy, const nlohmann::json& params);

}  // namespace harness::case_
