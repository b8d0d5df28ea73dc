// The design's dose (see dose.hpp).
#include "harness/campaign/model/dose.hpp"

#include "harness/campaign/model/campaign_arms.hpp"
#include "harness/case/control/arm.hpp"
#include "harness/case/control/policy.hpp"

#include <algorithm>

namespace harness::campaign {

namespace hc = harness::case_;

bool takes_design_dose(const Arm& arm) {
  const hc::PolicyInfo* p = hc::find_policy(arm.policy);
  return p && hc::takes_design_dose(*p, arm.study);
}

bool needs_design_dose(const Campaign& c) { return std::any_of(c.arms.begin(), c.arms.end(), takes_design_dose); }

std::optional<std::int64_t> case_dose_bytes(const Arm& arm, std::optional<std::int64_t> design_bytes) {
  return takes_design_dose(arm) ? design_bytes : std::nullopt;
}

std::int64_t dose_bytes(std::int64_t mib) { return hc::dose_bytes_of_mib(mib); }

Checked check_design_dose(const Campaign& c, std::int64_t dose_bytes) {
  for (const auto& a : c.arms) {
    if (!takes_design_dose(a)) continue;
    const nlohmann::json params{{"dose_mib", hc::dose_mib_of_bytes(dose_bytes)}};
    for (const auto& st : arm_settings_of_regimes(c))  // every regime's bg limit (a regime may declare its own)
      if (auto e = hc::settings_problem(*hc::find_policy(a.policy), params, st))
        return problem("the study's " + a.name + " takes this dose: " + e->what());
  }
  return {};
}

}  // namespace harness::campaign
