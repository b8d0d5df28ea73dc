// outcome_json.load: achieved allocation rate and the pressure episode (SPEC.md v2).
#include "harness/case/run/load_summary.hpp"
#include "harness/json/limited_parse.hpp"
#include "harness/json/optional.hpp"

#include <cmath>

#include "harness/case/host/children.hpp"

namespace harness::case_ {

namespace {
using harness::json::or_null;
}  // namespace

nlohmann::json LoadSummary::to_json() const {
  return {{"nominal_rate_mib_s", nominal_rate_mib_s},
          {"active_set_slide_mib_s", active_set_slide_mib_s},
          {"allocation_bytes", or_null(allocation_bytes)},
          {"allocation_elapsed_ns", or_null(allocation_elapsed_ns)},
          {"achieved_rate_mib_s", or_null(achieved_rate_mib_s)},
          {"rate_shortfall", or_null(rate_shortfall)},
          {"episode",
           {{"first_ns", or_null(episode.first_ns)},
            {"last_ns", or_null(episode.last_ns)},
            {"length_s", or_null(episode.length_s)},
            {"fraction_of_pressure", or_null(episode.fraction_of_pressure)},
            {"windows_with_growth", episode.windows_with_growth}}}};
}

LoadSummary load_summary(const CaseSpec& spec, const nlohmann::json& report,
                         const std::vector<ControllerEvent>& events) {
  LoadSummary j;
  j.nominal_rate_mib_s = spec.pressure.rate_mib_s;
  j.active_set_slide_mib_s = spec.pressure.active_set_slide_mib_s;
  if (report.is_object() && report.contains("allocated_mib") && report.contains("allocation_elapsed_s") &&
      report["allocated_mib"].is_number() && report["allocation_elapsed_s"].is_number()) {
    const double mib = report["allocated_mib"].get<double>();
    const double secs = report["allocation_elapsed_s"].get<double>();
    j.allocation_bytes = static_cast<std::int64_t>(std::llround(mib * 1048576.0));
    j.allocation_elapsed_ns = static_cast<std::int64_t>(std::llround(secs * 1e9));
    if (secs > 0) {
      const double rate = mib / secs;
      j.achieved_rate_mib_s = rate;
      j.rate_shortfall = 1.0 - rate / spec.pressure.rate_mib_s;
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
  j.episode.windows_with_growth = n;
  if (first && last) {
    const double len_s = static_cast<double>(*last - *first) / 1e9;
    j.episode.first_ns = *first;
    j.episode.last_ns = *last;
    j.episode.length_s = len_s;
    j.episode.fraction_of_pressure = len_s / static_cast<double>(spec.phases.pressure_s);
  }
  return j;
}

nlohmann::json read_pressure_gen_report(const std::string& path) {
  try {
    const auto text = read_output(path);
    if (!text.empty()) return harness::json::parse(text, path);
  } catch (const std::exception&) {
    // a missing or torn report is recorded as null below; the case's own status says why pressure-gen stopped
  }
  return nullptr;
}

}  // namespace harness::case_
