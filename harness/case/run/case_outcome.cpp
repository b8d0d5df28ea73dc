// cases.outcome_json from the typed outcome (case_outcome.hpp; keys: SPEC.md).
#include "harness/case/run/case_outcome.hpp"

#include "harness/json/optional.hpp"

namespace harness::case_ {

namespace {
using json = nlohmann::json;
using harness::json::or_null;

json to_json(const TriggerOutcome& t) {
  json j{{"fired", t.fired}, {"kind", t.kind}};
  if (t.t_ns) j["t_ns"] = *t.t_ns;
  if (t.since_pressure_start_ns) j["since_pressure_start_ns"] = *t.since_pressure_start_ns;
  j["windows"] = t.windows;
  j["irregular_windows"] = t.irregular_windows;
  j["earlier_without_length_rule_t_ns"] = t.earlier_without_length_rule_t_ns ? json(*t.earlier_without_length_rule_t_ns) : json();
  return j;
}

json to_json(const CaseClock& c) {
  return {{"origin_ns", c.origin_ns},
          {"pressure_start_ns", c.pressure_start_ns},
          {"pressure_end_ns", c.pressure_end_ns},
          {"end_ns", c.end_ns},
          {"telemetry_offset_ns", c.tick_offset_ns},
          {"sqlite_origin_ns", c.sqlite_origin_ns()}};
}

json to_json(const ChildRecord& c) {
  json j{{"pid", c.pid}, {"spawned_ns", c.spawned_ns}, {"term_ns", or_null(c.term_ns)}};
  if (c.exit) {
    j["exited"] = c.exit->exited;
    j["exit_code"] = c.exit->exited ? json(c.exit->exit_code) : json();
    j["signal"] = c.exit->signal ? json(c.exit->signal) : json();
    j["reaped_ns"] = c.exit->reaped_ns;
  } else {
    j["exited"] = nullptr;
    j["note"] = "not reaped";
  }
  return j;
}

json to_json(const CanaryTraceCount& c) {
  if (c.error) return {{"error", *c.error}};
  json j{{"requests", c.requests}, {"not_recorded", c.not_recorded}, {"origin_ns", c.origin_ns},
         {"period_ns", c.period_ns}};
  if (c.from_journal) {
    j["from_journal"] = true;
    j["trace_error"] = c.trace_error;
  }
  return j;
}

json to_json(const VmStateOutcome& v) {
  json j = json::object();
  if (v.start) {
    j["start"] = v.start->state.to_json();
    j["start"]["steps"] = steps_json(v.start->steps);
    j["baseline"] = v.start->baseline ? json{{"mem_available_kib", v.start->baseline->mem_available_kib},
                                             {"case_id", v.start->baseline->case_id},
                                             {"established_by_this_case", v.start->established_baseline}}
                                      : json();
  }
  if (v.end) j["end"] = v.end->to_json();
  if (v.baseline_check) j["baseline_check"] = v.baseline_check->to_json();
  return j;
}

json to_json(const ClocksourceRecord& c) {
  return {{"start", or_null(c.start)},
          {"end", or_null(c.end)},
          {"changed", c.start && c.end ? json(*c.start != *c.end) : json()}};
}

json to_json(const HarnessSelf& h) {
  json j{{"wall_ns", h.wall_ns},
         {"executor", {{"cpu_ns", or_null(h.executor_cpu_ns)}, {"peak_rss_kib", or_null(h.executor_peak_rss_kib)}}},
         {"reclaim_write_cpu_ns", or_null(h.reclaim_write_cpu_ns)},
         {"cpu_ns", or_null(h.cpu_ns)},
         {"vcpu_fraction", or_null(h.vcpu_fraction)},
         {"peak_rss_kib", or_null(h.peak_rss_kib)}};
  j["agent"] = h.agent ? json{{"pid", h.agent->pid}, {"cpu_ns", or_null(h.agent->cpu_ns)},
                              {"peak_rss_kib", or_null(h.agent->peak_rss_kib)}}
                       : json();
  if (h.peak_rss_sum_kib) j["peak_rss_sum_kib"] = *h.peak_rss_sum_kib;
  j["schedule"] = h.schedule ? json{{"wall_ns", h.schedule->wall_ns},
                                    {"cpu_ns", h.schedule->cpu_ns},
                                    {"agent_cpu_ns", or_null(h.schedule->agent_cpu_ns)},
                                    {"telemetry_cpu_ns", h.schedule->telemetry_cpu_ns},
                                    {"vcpu_fraction", h.schedule->vcpu_fraction}}
                             : json();
  return j;
}

json to_json(const OomOutcome& o, bool kills) {
  return kills ? json{{"bg", or_null(o.bg_kills)}, {"fg", or_null(o.fg_kills)}}
               : json{{"bg", or_null(o.bg_events)}, {"fg", or_null(o.fg_events)}};
}
}  // namespace

TriggerOutcome trigger_outcome(const TriggerPredicate& p, bool acts, std::int64_t pressure_start_ns) {
  TriggerOutcome t;
  t.fired = p.fired();
  t.kind = acts ? "trigger" : "would_trigger";
  if (p.fired()) {
    t.t_ns = *p.fired_at_ns();
    t.since_pressure_start_ns = *p.fired_at_ns() - pressure_start_ns;
  }
  t.windows = p.windows();
  t.irregular_windows = p.irregular_windows();
  t.earlier_without_length_rule_t_ns = p.earlier_without_length_rule_ns();
  return t;
}

nlohmann::json outcome_json(const CaseOutcome& o) {
  json j = json::object();
  j["source"] = {{"commit", o.source.commit}, {"dirty", o.source.dirty}};
  if (o.timing_claims_valid) j["timing_claims_valid"] = *o.timing_claims_valid;
  j["leftover_steps"] = steps_json(o.leftover_steps);
  if (o.vm_state) j["vm_state"] = to_json(*o.vm_state);
  if (o.variant) j["variant"] = o.variant->to_json();
  if (o.qualification_skipped) j["qualification_skipped"] = *o.qualification_skipped;
  if (o.setup_steps) j["setup_steps"] = steps_json(*o.setup_steps);
  if (o.zram_device) j["zram_device"] = *o.zram_device;
  if (o.zram) j["zram"] = o.zram->device ? to_json(*o.zram->device) : json();
  if (o.schedule) j["schedule"] = to_json(*o.schedule);
  for (const auto& [name, argv] : o.argv) j["argv"][name] = argv;
  if (o.missed_ticks) j["missed_ticks"] = *o.missed_ticks;
  if (o.cancelled_by_signal) j["cancelled_by_signal"] = *o.cancelled_by_signal;
  if (o.trigger) j["trigger"] = to_json(*o.trigger);
  if (o.reclaim) j["reclaim"] = o.reclaim->record ? o.reclaim->record->to_json(o.reclaim->page_size_bytes) : json();
  if (o.backend_on) j["backend_on"] = o.backend_on->to_json();
  if (o.oom) {
    j["oom_kills"] = to_json(*o.oom, true);
    j["oom_events"] = to_json(*o.oom, false);
  }
  if (o.restoration) j["restoration"] = o.restoration->to_json();
  if (o.processes) {
    json procs = json::object();
    for (const auto& c : *o.processes) procs[c.name] = to_json(c);
    j["processes"] = procs;
  }
  if (o.restoration_error) j["restoration_error"] = *o.restoration_error;
  if (o.canary_requests) {
    json counts = json::object();
    for (const auto& [name, c] : *o.canary_requests) counts[name] = to_json(c);
    j["canary_requests"] = counts;
  }
  if (o.load) j["load"] = o.load->to_json();
  j["workload_started"] = o.workload_started;
  j["clocksource"] = to_json(o.clocksource);
  j["steal"] = o.steal.to_json();
  j["harness_self"] = to_json(o.harness_self);
  return j;
}

}  // namespace harness::case_
