// Backend telemetry validity (see backend_validity.hpp).
#include "analysis/tables/backend_validity.hpp"
#include "harness/json/limited_parse.hpp"

#include "analysis/data/case_outcome.hpp"
#include "results/db.hpp"
#include "results/store/controller_events.hpp"
#include "results/store/phases.hpp"
#include "results/store/telemetry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace analysis {
namespace {

// Problems of rule 1: zram samples throughout [ps, pe].
void check_samples(results::Db& db, const std::string& id, const nlohmann::json& spec, std::vector<std::string>& out) {
  std::optional<std::int64_t> ps, pe;
  if (const auto p = results::read_phase(db, id, "pressure")) {
    ps = p->start_ns;
    pe = p->end_ns;
  }
  if (!ps || !pe) {
    out.push_back("invalid backend telemetry: no pressure phase with start and end in table phases");
    return;
  }
  const double period_ms = json_number(spec, {"telemetry_period_ms"}).value_or(1000.0);
  const auto max_gap_ns = static_cast<std::int64_t>(kMaxZramGapPeriods * period_ms * 1e6);
  int samples = 0, without = 0;
  std::int64_t prev = *ps, worst_gap = 0, worst_at = *ps;
  std::optional<std::int64_t> first_without;
  results::for_each_telemetry(db, id, results::TimeWindow{*ps, *pe}, [&](const results::TelemetryRow& r) {
    ++samples;
    const std::int64_t t = r.t_ns;
    if (!r.zram_orig_data_bytes) {
      ++without;
      if (!first_without) first_without = t;
      return;  // a sample without zram columns is no zram sample: the gap runs on
    }
    if (t - prev > worst_gap) worst_gap = t - prev, worst_at = prev;
    prev = t;
  });
  if (*pe - prev > worst_gap) worst_gap = *pe - prev, worst_at = prev;
  if (samples == 0) {
    out.push_back("invalid backend telemetry: no telemetry sample in the pressure phase");
    return;
  }
  if (without > 0)
    out.push_back(fmt::format("invalid backend telemetry: {} of {} pressure-phase sample(s) lack the zram mm_stat "
                              "columns (first {:.1f} s after pressure start)",
                              without, samples, (*first_without - *ps) / 1e9));
  if (worst_gap > max_gap_ns)
    out.push_back(fmt::format("invalid backend telemetry: no zram sample for {:.1f} s from {:.1f} s after pressure start "
                              "(more than {:g} telemetry periods of {:g} ms)",
                              worst_gap / 1e9, (worst_at - *ps) / 1e9, kMaxZramGapPeriods, period_ms));
}

// The zram device the case used: outcome_json.zram_device, else outcome_json.zram.device.
std::string zram_device(const nlohmann::json& o) {
  if (o.is_object() && o.contains("zram_device") && o["zram_device"].is_string()) return o["zram_device"];
  if (o.is_object() && o.contains("zram") && o["zram"].is_object() && o["zram"].contains("device") &&
      o["zram"]["device"].is_string())
    return o["zram"]["device"];
  return "";
}

// Rule 2, static-zram / bounded-reclaim: swapped on in setup.
void check_active_from_start(const nlohmann::json& o, std::vector<std::string>& out) {
  if (!o.is_object() || !o.contains("setup_steps") || !o["setup_steps"].is_array()) {
    out.push_back("invalid backend telemetry: outcome_json.setup_steps not recorded (zram swapon before the case "
                  "cannot be shown)");
    return;
  }
  const std::string dev = zram_device(o);
  const std::string want = "swapon " + (dev.empty() ? std::string("/dev/zram") : dev);
  for (const auto& s : o["setup_steps"]) {
    if (!s.is_object() || !s.contains("step") || !s["step"].is_string()) continue;
    const std::string step = s["step"];
    if (step.rfind(want, 0) != 0) continue;
    const auto err = json_number(s, {"errno"});
    if (err && *err == 0) return;
    out.push_back(fmt::format("invalid backend telemetry: setup step '{}' returned errno {}", step, err.value_or(-1)));
    return;
  }
  out.push_back(fmt::format("invalid backend telemetry: zram not active from the start (no setup step '{} ...' in "
                            "outcome_json.setup_steps)",
                            want));
}

// Rule 2, delayed-activation: one backend_on with errno 0 at or after the trigger.
void check_active_after_trigger(results::Db& db, const std::string& id, std::vector<std::string>& out) {
  const std::optional<std::int64_t> trigger = results::first_event_ns(db, id, {"trigger"});
  if (!trigger) {
    out.push_back("invalid backend telemetry: delayed activation without a trigger event (zram never activated)");
    return;
  }
  int n = 0;
  for (const auto& e : results::events_of_kind(db, id, "backend_on")) {
    ++n;
    const std::int64_t t = e.t_ns;
    const auto d = harness::json::parse_or_discarded(e.detail_json.value_or("null"));
    const auto err = json_number(d, {"step", "errno"});
    if (t < *trigger)
      out.push_back(fmt::format("invalid backend telemetry: backend_on {:.3f} s before the trigger", (*trigger - t) / 1e9));
    else if (!err || *err != 0)
      out.push_back(fmt::format("invalid backend telemetry: backend_on step returned errno {}",
                                err ? fmt::format("{}", *err) : std::string("(not recorded)")));
  }
  if (n == 0) out.push_back("invalid backend telemetry: no backend_on event after the trigger (zram never activated)");
  else if (n > 1) out.push_back(fmt::format("invalid backend telemetry: {} backend_on events (the study enables it once)", n));
}

}  // namespace

std::vector<std::string> backend_telemetry_findings(results::Db& db, const std::string& case_id, ZramDue due,
                                                    const nlohmann::json& outcome_json, const nlohmann::json& spec) {
  std::vector<std::string> out;
  check_samples(db, case_id, spec, out);
  if (due == ZramDue::AfterTrigger) check_active_after_trigger(db, case_id, out);
  else check_active_from_start(outcome_json, out);
  return out;
}

}  // namespace analysis
