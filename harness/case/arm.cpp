// The arm of a case: resolved from its spec, and as canonical JSON (arm.hpp).
#include "harness/case/arm.hpp"

#include "harness/case/policy.hpp"
#include "harness/kernel/size.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace harness::case_ {

ResolvedArm resolve_arm(const std::string& configuration, const nlohmann::json* policy,
                        std::optional<std::int64_t> dose_bytes) {
  using harness::kernel::kMiB;
  ResolvedArm arm;
  nlohmann::json given = nlohmann::json::object();
  if (policy && !policy->is_null()) {
    if (!policy->is_object()) throw SpecError("policy", "must be a JSON object {name, params}");
    for (auto it = policy->begin(); it != policy->end(); ++it)
      if (it.key() != "name" && it.key() != "params") throw SpecError("policy." + it.key(), "unknown field");
    if (!policy->contains("name") || !policy->at("name").is_string())
      throw SpecError("policy.name", "must be the name of a registered policy");
    arm.policy = policy->at("name").get<std::string>();
    if (!find_policy(arm.policy))
      throw SpecError("policy.name", fmt::format("'{}' is not a registered policy ({})", arm.policy, policy_names()));
    if (policy->contains("params") && !policy->at("params").is_null()) given = policy->at("params");
    arm.in_spec = true;
  } else {
    const PolicyInfo* study = find_policy(configuration);
    if (!study || !study->study_position)
      throw SpecError("configuration", fmt::format("'{}' is not one of the study's arms ({}); another arm names its policy "
                                                   "in `policy: {{name, params}}`",
                                                   configuration, study_arm_names()));
    arm.policy = configuration;
  }
  const PolicyInfo& info = *find_policy(arm.policy);
  const bool takes_dose =
      std::any_of(info.params.begin(), info.params.end(), [](const ParamDef& d) { return d.name == "dose_mib"; });
  if (!arm.in_spec && takes_dose) {
    // The study's bounded-reclaim: its dose is the spec's dose_bytes.
    if (!dose_bytes) throw SpecError("dose_bytes", "is required for " + configuration);
    if (*dose_bytes <= 0) throw SpecError("dose_bytes", "must be > 0 bytes");
    // Whole MiB stay an integer, so the arm's canonical JSON reads as a campaign writes it.
    if (*dose_bytes % kMiB == 0) given["dose_mib"] = *dose_bytes / kMiB;
    else given["dose_mib"] = static_cast<double>(*dose_bytes) / static_cast<double>(kMiB);
  }
  try {
    arm.params = validate_params(info, given);
  } catch (const ParamError& e) {
    throw SpecError(e.field().empty() ? "policy.params" : "policy.params." + e.field(), e.what());
  }
  return arm;
}

nlohmann::json arm_json(const CaseSpec& s) {
  return {{"name", s.configuration}, {"params", s.policy_params}, {"policy", s.policy}};
}

}  // namespace harness::case_
