// Dose from a pilot DB at plan time (see pilot_dose.hpp).
#include "harness/campaign/pilot_dose.hpp"

#include "analysis/pilot.hpp"
#include "harness/digest/sha256.hpp"

#include <filesystem>

namespace harness::campaign {

PilotDose resolve_pilot_dose(const std::string& pilot_db, double max_duration_s, double min_achieved_ratio) {
  const std::string where = "design.dose_mib.from_pilot: " + pilot_db;
  if (!std::filesystem::is_regular_file(pilot_db)) throw PilotDoseError(where + ": no such pilot DB");
  PilotDose out;
  out.sha256_hex = harness::digest::sha256_file(pilot_db);  // before reading: the bytes the rule sees
  analysis::PilotRule rule;
  rule.max_duration_s = max_duration_s;
  rule.min_achieved_ratio = min_achieved_ratio;
  analysis::PilotResult r;
  try {
    r = analysis::select_dose(pilot_db, rule);
  } catch (const std::exception& e) {
    throw PilotDoseError(where + ": cannot apply the pilot rule: " + e.what());
  }
  if (!r.chosen_bytes) {
    std::string why;
    for (const auto& d : r.doses) {
      why += "\n  " + std::to_string(d.dose_bytes / (1024 * 1024)) + " MiB: ";
      for (std::size_t i = 0; i < d.failed.size(); ++i) why += (i ? "; " : "") + d.failed[i];
      if (d.failed.empty()) why += "not eligible";
    }
    throw PilotDoseError(where + ": no eligible dose (pilot rule)" + why);
  }
  out.dose_bytes = *r.chosen_bytes;
  return out;
}

}  // namespace harness::campaign
