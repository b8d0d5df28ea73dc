#pragma once
// Does the pilot DB a confirmatory campaign takes its dose from (`design.dose_mib.from_pilot`)
// match that campaign? (ours; docs/CAMPAIGN.md, key design.dose_mib.accept_differences)
//
// A dose is the pilot rule's answer for one setting of the experiment: the pilot's eligibility
// thresholds, its bg limit, phases, regimes, backend, trigger, VM shape and guest kernel. A
// pilot run under other settings chose its dose for another experiment, so `harness plan` and
// `harness run` compare the pilot campaign as stored in its DB (campaign_meta.campaign_yaml,
// cases.kernel_release) with the confirmatory campaign and refuse any difference, naming the
// setting, both values and both files, unless the campaign lists the setting in
// `design.dose_mib.accept_differences`. The same list may accept `pilot_choice`: the
// confirmatory's own eligibility section choosing another dose than the pilot's own did.
#include "harness/campaign/model/ab_settings.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/model/pilot_settings.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/error/expected.hpp"

namespace harness::campaign {

/// The pilot campaign as its DB stores it.
struct StoredPilot {
  Campaign campaign;                         ///< parsed from campaign_meta.campaign_yaml
  std::string file;                          ///< campaign_meta.campaign_file ("" when absent)
  /// Distinct cases.kernel_release of its completed bounded-reclaim cases, sorted; a NULL
  /// release is "(not recorded)".
  std::vector<std::string> kernel_releases;
};

/// Reads `pilot_db`'s stored campaign and kernels. Throws PilotDoseError (pilot_dose.hpp) naming
/// the pilot DB when it holds no campaign YAML or the YAML no longer parses (with the parser's
/// FILE:LINE:COL message).
StoredPilot load_stored_pilot(const std::string& pilot_db);

/// The outcome of a pilot comparison that `c` accepted.
struct PilotMatch {
  /// The differing settings `c` declared (path, ours = this campaign's value, theirs = the
  /// pilot's), sorted by path; empty when the campaigns agree.
  std::vector<SettingDifference> accepted;
  /// The dose the pilot's own eligibility section chooses over its DB when it differs from
  /// the one `c`'s section chose (declared as `pilot_choice`); nullopt when they agree.
  /// A value of 0 means the pilot's own rule finds no eligible dose.
  std::optional<std::int64_t> pilot_rule_dose_bytes;
  std::vector<std::string> pilot_kernel_releases;  ///< StoredPilot::kernel_releases
};

/// Compares `c` (its from_pilot DB, its settings, its accept_differences) with the stored pilot;
/// `chosen_bytes` is the dose `c`'s eligibility section chose over that DB (resolve_pilot_dose).
/// Re-runs the pilot rule with the pilot campaign's own eligibility section (what
/// `harness pilot-select` reports). Throws PilotDoseError when a difference is not declared:
/// the message names every undeclared setting with the pilot's value and this campaign's,
/// both files, and the accept_differences entry that would accept it.
PilotMatch match_pilot(const Campaign& c, std::int64_t chosen_bytes);

/// The guest-kernel rule at run: passed when `c` takes no dose from a pilot, declares
/// `guest_kernel`, or every VM's release (vm name, uname -r from its qualification report)
/// is the pilot's one release; else the Problem, naming each differing VM with both releases
/// and both files.
Checked check_pilot_kernel(const Campaign& c, const std::vector<std::string>& pilot_releases,
                           const std::vector<std::pair<std::string, std::string>>& vm_releases);

/// The guest-kernel rule at plan, when the engine that will run `c` knows its guests' kernel
/// before any boots (`kernel_known_before_boot`: harness/pool/pool.hpp Capabilities of the
/// campaign's engine, or of the hosts engine under `--hosts FILE`), its guests booting the image
/// in `default_image_dir` (<cache>/image): check_pilot_kernel with every VM of `c` running the
/// release its manifest.json records. Passed when `c` takes no dose from a pilot, the engine
/// knows its kernels at run only, or the image is not built yet. Throws PilotDoseError as
/// load_stored_pilot, std::runtime_error when the manifest cannot be read.
Checked check_pilot_image_kernel(const Campaign& c, bool kernel_known_before_boot,
                                 const std::string& default_image_dir);

}  // namespace harness::campaign
