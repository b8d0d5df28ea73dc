#pragma once
// The design's dose (study: one write of the dose, 96 MiB chosen by the pilot rule, to bg
// memory.reclaim; docs/CAMPAIGN.md design.dose_mib): which arm takes it, its unit in the plan,
// and the rule it must meet. The campaign's one copy of the dose rule: the loader, the planner
// and `harness plan`'s listing of the arms ask it; the case's own side (a spec's dose_bytes
// as the policy's dose_mib) is harness/case/control/arm.hpp, which it builds on.
#include "harness/campaign/model/campaign.hpp"

#include <cstdint>
#include <optional>
#include <string>

#include "harness/error/expected.hpp"

namespace harness::campaign {

/// Whether `arm` takes the design's dose: a study arm listed by name (Arm::study) whose policy
/// has a dose_mib parameter (harness/case/control/arm.hpp takes_design_dose: the study's
/// bounded-reclaim). Every other arm carries its own parameters.
bool takes_design_dose(const Arm& arm);

/// Whether some arm of `c` takes the design's dose (design.dose_mib is then required).
bool needs_design_dose(const Campaign& c);

/// The dose the cases of `arm` carry (ScheduledCase::dose_bytes, the spec's dose_bytes):
/// `design_bytes` when takes_design_dose(arm), else nullopt.
std::optional<std::int64_t> case_dose_bytes(const Arm& arm, std::optional<std::int64_t> design_bytes);

/// A dose in MiB (design.dose_mib, a pilot's design.doses_mib) in bytes, as the plan and the
/// spec carry it (harness/case/control/arm.hpp dose_bytes_of_mib).
std::int64_t dose_bytes(std::int64_t mib);

/// Whether the arms of `c` that take the design's dose accept `dose_bytes` (their policy's
/// settings_check against every regime's settings, campaign_arms.hpp arm_settings_of_regimes:
/// the study's rule, below each regime's bg limit), else the Problem "the study's <arm> takes
/// this dose: <what is wrong>". The loader calls it on design.dose_mib, the planner on a dose
/// chosen from the pilot (design.dose_mib.from_pilot).
Checked check_design_dose(const Campaign& c, std::int64_t dose_bytes);

}  // namespace harness::campaign
