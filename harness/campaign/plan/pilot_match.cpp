// A confirmatory campaign against the pilot DB its dose comes from (see pilot_match.hpp).
#include "harness/campaign/plan/pilot_match.hpp"

#include "analysis/tables/pilot.hpp"
#include "harness/campaign/plan/pilot_dose.hpp"
#include "harness/text/join.hpp"
#include "harness/vm/image.hpp"
#include "results/db.hpp"
#include "results/store/case_queries.hpp"
#include "results/store/meta.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace harness::campaign {
namespace {

/// Does the declared entry `e` cover the setting at `path` (the path itself or a group above it)?
bool covers(const std::string& e, const std::string& path) {
  return path == e || (path.size() > e.size() && path.compare(0, e.size(), e) == 0 && path[e.size()] == '.');
}

bool declared(const Campaign& c, const std::string& path) {
  return std::any_of(c.dose_accept_differences.begin(), c.dose_accept_differences.end(),
                     [&](const std::string& e) { return covers(e, path); });
}

/// The accept_differences entry that accepts `path`: the path itself, or `regimes`.
std::string entry_for(const std::string& path) { return path.rfind("regimes.", 0) == 0 ? "regimes" : path; }

analysis::PilotRule rule_of(const Campaign& c) {
  return {c.eligibility_max_duration_s, c.eligibility_min_achieved_ratio, c.eligibility_reading};
}

std::string rule_text(const Campaign& c) {
  return "eligibility " + pilot_match_settings(c).at("eligibility").dump();
}

std::string mib_text(std::int64_t bytes) {
  return bytes == 0 ? std::string("no dose (none eligible)") : fmt::format("{:g} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

}  // namespace

StoredPilot load_stored_pilot(const std::string& pilot_db) {
  const std::string where = "design.dose_mib.from_pilot: " + pilot_db;
  StoredPilot out;
  std::string yaml;
  try {
    results::Db db(pilot_db, results::Db::Mode::ReadOnly);
    const auto stored_yaml = results::meta_value(db, "campaign_yaml");
    if (!stored_yaml) throw PilotDoseError(where + ": holds no campaign YAML (campaign_meta.campaign_yaml), so its settings "
                                                   "cannot be compared with this campaign's");
    yaml = *stored_yaml;
    out.file = results::meta_value(db, "campaign_file").value_or("");
    for (const auto& k : results::completed_kernel_releases(db, analysis::pilot_arm()))
      out.kernel_releases.push_back(k.value_or("(not recorded)"));
  } catch (const results::DbError& e) {
    throw PilotDoseError(where + ": " + e.what());
  }
  try {
    out.campaign = parse_campaign(yaml, (out.file.empty() ? std::string("campaign") : out.file) + " (as stored in " + pilot_db + ")");
  } catch (const std::exception& e) {
    throw PilotDoseError(where + ": its stored campaign does not parse, so its settings cannot be compared (a DB from "
                         "write_synthetic_pilot stores one only when given campaign_yaml, analysis/README.md): " + e.what());
  }
  return out;
}

PilotMatch match_pilot(const Campaign& c, std::int64_t chosen_bytes) {
  const std::string& db = c.dose_from_pilot;
  StoredPilot p = load_stored_pilot(db);
  PilotMatch out;
  out.pilot_kernel_releases = p.kernel_releases;
  std::vector<std::string> refused;
  for (auto& d : differing_settings(pilot_match_settings(c), pilot_match_settings(p.campaign))) {
    if (declared(c, d.path)) out.accepted.push_back(d);
    else refused.push_back(d.path + ": pilot " + d.theirs + ", this campaign " + d.ours + " (to accept: " + entry_for(d.path) + ")");
  }
  // The pilot's own selection (what `harness pilot-select` reports) against this campaign's.
  analysis::PilotResult own;
  try {
    own = analysis::select_dose(db, rule_of(p.campaign));
  } catch (const std::exception& e) {
    throw PilotDoseError("design.dose_mib.from_pilot: " + db + ": cannot apply the pilot's own rule: " + e.what());
  }
  const std::int64_t pilot_choice = own.chosen_bytes.value_or(0);
  if (pilot_choice != chosen_bytes) {
    if (declared(c, kPilotChoiceSetting)) out.pilot_rule_dose_bytes = pilot_choice;
    else
      refused.push_back(std::string(kPilotChoiceSetting) + ": the pilot's " + rule_text(p.campaign) + " chooses " +
                        mib_text(pilot_choice) + ", this campaign's " + rule_text(c) + " chooses " +
                        mib_text(chosen_bytes) + " (to accept: " + kPilotChoiceSetting + ")");
  }
  if (!refused.empty()) {
    std::string msg = c.file + ": field design.dose_mib.from_pilot: the pilot DB " + db + " (its campaign " +
                      (p.file.empty() ? std::string("file not recorded") : p.file) +
                      ") differs from this campaign in what its dose depends on, so its dose is not this campaign's:";
    for (const auto& r : refused) msg += "\n  " + r;
    msg += "\nRun the pilot with this campaign's settings, or declare each accepted difference in "
           "design.dose_mib.accept_differences (docs/CAMPAIGN.md); the plan then records them.";
    throw PilotDoseError(msg);
  }
  return out;
}

Checked check_pilot_kernel(const Campaign& c, const std::vector<std::string>& pilot_releases,
                           const std::vector<std::pair<std::string, std::string>>& vm_releases) {
  if (c.dose_from_pilot.empty() || declared(c, kGuestKernelSetting)) return {};
  std::string pilot = text::join(pilot_releases);
  if (pilot.empty()) pilot = std::string("(no completed ") + analysis::pilot_arm() + " case)";
  std::string lines;
  for (const auto& [vm, release] : vm_releases)
    if (pilot_releases.size() != 1 || pilot_releases.front() != release)
      lines += "  " + vm + ": kernel " + release + ", the pilot's cases: " + pilot + "\n";
  if (lines.empty()) return {};
  return problem(c.file + ": field design.dose_mib.from_pilot: the guests run another kernel than the pilot DB " +
                 c.dose_from_pilot + " whose dose this campaign takes (uname -r):\n" + lines +
                 "Run on the pilot's kernel, run the pilot again on this one, or declare guest_kernel in "
                 "design.dose_mib.accept_differences (docs/CAMPAIGN.md).\n");
}

Checked check_pilot_image_kernel(const Campaign& c, bool kernel_known_before_boot,
                                 const std::string& default_image_dir) {
  if (c.dose_from_pilot.empty() || !kernel_known_before_boot || declared(c, kGuestKernelSetting)) return {};
  if (!std::filesystem::exists(std::filesystem::path(default_image_dir) / "manifest.json")) return {};
  const std::string release = harness::vm::load_image_dir(default_image_dir).kernel_release;
  std::vector<std::pair<std::string, std::string>> vms;
  for (const auto& vm : c.vms) vms.emplace_back(vm, release + " (image " + default_image_dir + ")");
  // The release alone is compared; the image directory only names where it came from.
  const auto pilot = load_stored_pilot(c.dose_from_pilot).kernel_releases;
  if (pilot.size() == 1 && pilot.front() == release) return {};
  return check_pilot_kernel(c, pilot, vms);
}

}  // namespace harness::campaign
