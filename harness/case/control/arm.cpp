// The arm of a case: resolved from its spec, and as canonical JSON (arm.hpp).
#include "harness/case/control/arm.hpp"

#include "harness/case/control/policy.hpp"
#include "harness/json/limited_parse.hpp"
#include "harness/kernel/size.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace harness::case_ {

bool takes_design_dose(const PolicyInfo& policy, bool study_arm) {
  return study_arm &&
         std::any_of(policy.params.begin(), policy.params.end(), [](const ParamDef& d) { return d.name == "dose_mib"; });
}

std::int64_t dose_bytes_of_mib(std::int64_t mib) { return mib * harness::kernel::kMiB; }

nlohmann::json dose_mib_of_bytes(std::int64_t bytes) {
  using harness::kernel::kMiB;
  if (bytes % kMiB == 0) return bytes / kMiB;  // whole MiB stay an integer
  return static_cast<double>(bytes) / static_cast<double>(kMiB);
}

ResolvedArm resolve_arm(const std::string& configuration, const nlohmann::json* policy,
                        std::optional<std::int64_t> dose_bytes) {
  ResolvedArm arm;
  nlohmann::json given = nlohmann::json::object();
  if (policy && !policy->is_null()) {
    if (!policy->is_object()) throw SpecError("policy", "must be a JSON object {name, params}");
    for (auto it = policy->begin(); it != policy->end(); ++it)
      if (it.key() != "name" && it.key() != "params")
        throw SpecError("policy." + harness::json::excerpt(it.key()), "unknown field");
    if (!policy->contains("name") || !policy->at("name").is_string())
      throw SpecError("policy.name", "must be the name of a registered policy");
    arm.policy = policy->at("name").get<std::string>();
    if (!find_policy(arm.policy))
      throw SpecError("policy.name", unknown_policy(arm.policy));
    if (policy->contains("params") && !policy->at("params").is_null()) given = policy->at("params");
    arm.in_spec = true;
  } else {
    const PolicyInfo* study = find_policy(configuration);
    if (!study || !study->study_position)
      throw SpecError("configuration", fmt::format("'{}' is not one of the study's arms ({}); another arm names its policy "
                                                   "in `policy: {{name, params}}`",
                                                   harness::json::excerpt(configuration), study_arm_names()));
    arm.policy = configuration;
  }
  const PolicyInfo& info = *find_policy(arm.policy);
  arm.takes_dose = takes_design_dose(info, !arm.in_spec);
  if (arm.takes_dose) {
    // The study's bounded-reclaim: its dose is the spec's dose_bytes.
    if (!dose_bytes) throw SpecError("dose_bytes", "is required for " + configuration);
    if (*dose_bytes <= 0) throw SpecError("dose_bytes", "must be > 0 bytes");
    given["dose_mib"] = dose_mib_of_bytes(*dose_bytes);
  }
  try {
    arm.params = validate_params(info, given);
  } catch (const ParamError& e) {
    throw SpecError(e.field().empty() ? "policy.params" : "policy.params." + e.field(), e.why());
  }
  return arm;
}

nlohmann::json arm_json(const std::string& name, const std::string& policy, const nlohmann::json& params) {
  return {{"name", name}, {"params", params}, {"policy", policy}};
}

}  // namespace harness::case_
