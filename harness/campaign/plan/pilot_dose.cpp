// Dose from a pilot DB at plan time (see pilot_dose.hpp).
#include "harness/campaign/plan/pilot_dose.hpp"

#include "analysis/tables/pilot.hpp"
#include "harness/digest/sha256.hpp"
#include "harness/text/join.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace harness::campaign {

PilotDose resolve_pilot_dose(const std::string& pilot_db, const analysis::PilotRule& rule, bool pipeline_test) {
  const std::string where = "design.dose_mib.from_pilot: " + pilot_db;
  if (!std::filesystem::is_regular_file(pilot_db)) throw PilotDoseError(where + ": no such pilot DB");
  PilotDose out;
  out.sha256_hex = harness::digest::sha256_file(pilot_db);  // before reading: the bytes the rule sees
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
      why += text::join(d.failed, "; ");
      if (d.failed.empty()) why += "not eligible";
    }
    throw PilotDoseError(where + ": no eligible dose (pilot rule)" + why);
  }
  out.dose_bytes = *r.chosen_bytes;
  out.accelerators = r.accelerators;
  if (out.ran_under_tcg() && !pipeline_test) {
    int total = 0;
    for (const auto& [a, n] : r.accelerators) total += n;
    throw PilotDoseError(
        where + ": " + std::to_string(r.accelerators.at("tcg")) + " of " + std::to_string(total) +
        " pilot case(s) ran under TCG (software emulation). The pilot rule's duration criterion (every write within " +
        fmt::format("{:g}", rule.max_duration_s) +
        " s) is meaningless there, so the dose it chose (" + std::to_string(out.dose_bytes / (1024 * 1024)) +
        " MiB) is not one to preregister. Run the pilot on KVM or real VMs (`harness run campaigns/pilot.yaml DB "
        "--hosts hosts.yaml`, docs/RESEARCHER.md \"Reproducing the pilot and the confirmatory study\"), or, to test the pipeline "
        "only, plan with `harness plan FILE DB --pipeline-test-dose` (the plan and the report then say so)");
  }
  return out;
}

}  // namespace harness::campaign
