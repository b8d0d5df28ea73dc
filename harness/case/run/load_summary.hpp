#pragma once
// outcome_json.load (SPEC.md "Version 2 additions"): how much load the case really had.
//
//   allocation_bytes       pressure-gen's allocated bytes (its JSON report: allocated_mib)
//   allocation_elapsed_ns  its time to allocate them (allocation_elapsed_s)
//   achieved_rate_mib_s    allocated MiB / allocation time; nominal_rate_mib_s = the spec's
//   rate_shortfall         1 - achieved / nominal
//   episode                the pressure episode: from the start of the first to the end of
//                          the last pressure-phase window (controller `window` rows) whose
//                          bg PSI some growth is >= trigger.min_increase_us (irregular
//                          windows included: the episode is about pressure, not the
//                          trigger). first_ns = that window's closing tick - its length;
//                          last_ns = the last one's closing tick; length_s = last - first;
//                          fraction_of_pressure = length_s / phases_s.pressure;
//                          windows_with_growth counts such windows. All null without any.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case/run/bundle.hpp"
#include "harness/case/spec/spec.hpp"

namespace harness::case_ {

/// outcome_json.load (fields as above; nullopt = null).
struct LoadSummary {
  double nominal_rate_mib_s = 0, active_set_slide_mib_s = 0;
  std::optional<std::int64_t> allocation_bytes, allocation_elapsed_ns;
  std::optional<double> achieved_rate_mib_s, rate_shortfall;
  struct Episode {
    std::optional<std::int64_t> first_ns, last_ns;
    std::optional<double> length_s, fraction_of_pressure;
    int windows_with_growth = 0;
  } episode;
  nlohmann::json to_json() const;
};

/// `pressure_gen_report`: pressure-gen's stdout JSON (null/empty when missing: the
/// allocation fields are then null). `events`: the case's controller events.
LoadSummary load_summary(const CaseSpec& spec, const nlohmann::json& pressure_gen_report,
                         const std::vector<ControllerEvent>& events);

/// pressure-gen's JSON report in the file at `path` (its stdout); null when the file is
/// missing, empty or not JSON.
nlohmann::json read_pressure_gen_report(const std::string& path);

}  // namespace harness::case_
