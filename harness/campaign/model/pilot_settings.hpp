#pragma once
// The settings a dose depends on (ours; docs/CAMPAIGN.md, key design.dose_mib.accept_differences):
// what a confirmatory campaign that takes its dose from a pilot DB is compared with that pilot
// in (plan/pilot_match.hpp compares them), and the names its accept_differences may list.
#include "harness/campaign/model/campaign.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace harness::campaign {

/// The two accept_differences names that are not campaign keys: the guests' kernel (uname -r,
/// judged at run, or at plan where the engine knows it before boot) and the pilot rule's choice.
inline constexpr const char* kGuestKernelSetting = "guest_kernel";
inline constexpr const char* kPilotChoiceSetting = "pilot_choice";

/// What `design.dose_mib.accept_differences` may list: the compared settings, each a group of
/// campaign-file keys (`vm`, `phases_s`, `cgroups.bg_memory_max_mib`, `cgroups.bg_memory_high_mib`,
/// `pressure`, `regimes`, `backend`, `trigger`, `eligibility`) or one key inside a group
/// (`phases_s.pressure`, `eligibility.max_duration_s`, `backend.zram.algorithm`, ...; regimes
/// only as a whole), and two names that are not campaign keys: `guest_kernel` (uname -r of the
/// guests: the pilot's cases.kernel_release against the confirmatory's qualified VMs, judged at
/// run) and `pilot_choice` (the dose differs between the two eligibility sections).
const std::vector<std::string>& pilot_difference_names();

/// The settings of `c` compared with its pilot, as a JSON object nested by campaign-file key:
/// vm, phases_s, cgroups (bg_memory_max_mib, bg_memory_high_mib), pressure, backend, trigger
/// (as comparison_settings, ab_settings.hpp), regimes keyed by name ({name: {rate_mib_s,
/// contents}}: their order does not matter) and eligibility with all four keys.
nlohmann::json pilot_match_settings(const Campaign& c);

}  // namespace harness::campaign
