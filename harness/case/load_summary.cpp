// outcome_json.load: achieved allocation rate and the pressure episode (SPEC.md v2).
#include "harness/case/load_summary.hpp"

#include <cmath>

namespace hcase {

nlohmann::json load_summary(const CaseSpec& spec, const nlohmann::json& report,
                            const std::vector<ControllerEvent>& events) {
  nlohmann::json j;
  j["nominal_rate_mib_s"] = spec.pressure.rate_mib_s;
  j["active_set_slide_mib_s"] = spec.pressure.active_set_slide_mib_s;
  j["allocation_bytes"] = nullptr;
  j["allocation_elapsed_ns"] = nullptr;
  j["achieved_rate_mib_s"] = nullptr;
  j["rate_shortfall"] = nullptr;
  if (report.is_object() && report.contains("allocated_mib") && report.contains("allocation_elapsed_s") &&
      report["allocated_mib"].is_number() && report["allocation_elapsed_s"].is_number()) {
    const double mib = report["allocated_mib"].get<double>();
    const double secs = report["allocation_elapsed_s"].get<double>();
    j["allocation_bytes"] = static_cast<std::int64_t>(std::llround(mib * 1048576.0));
    j["allocation_elapsed_ns"] = static_cast<std::int64_t>(std::llround(secs * 1e9));
    if (secs > 0) {
      const double rate = mib / secs;
      j["achieved_rate_mib_s"] = rate;
      j["rate_shortfall"] = 1.0 - rate / spec.pressure.rate_mib_s;
    }
  }
  std::optional<std::int64_t> first, last;
  int n = 0;
  for (const auto& e : events) {
    if (e.kind != "window" || !e.delta_us || *e.delta_us < spec.trigger.min_increase_us) continue;
    const std::int64_t len = e.window_ns.value_or(static_cast<std::int64_t>(spec.trigger.window_ms) * 1'000'000);
    if (!first) first = e.t_ns - len;
    last = e.t_ns;
    ++n;
  }
  nlohmann::json ep{{"first_ns", nullptr}, {"last_ns", nullptr}, {"length_s", nullptr},
                    {"fraction_of_pressure", nullptr}, {"windows_with_growth", n}};
  if (first && last) {
    const double len_s = static_cast<double>(*last - *first) / 1e9;
    ep["first_ns"] = *first;
    ep["last_ns"] = *last;
    ep["length_s"] = len_s;
    ep["fraction_of_pressure"] = len_s / static_cast<double>(spec.phases.pressure_s);
  }
  j["episode"] = ep;
  return j;
}

}  // namespace hcase
