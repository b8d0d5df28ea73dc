// Per-case outcome records (see case_outcome.hpp).
#include "analysis/data/case_outcome.hpp"

#include "results/db.hpp"
#include "results/store/controller_events.hpp"
#include "results/store/phases.hpp"
#include "results/store/reclaim_actions.hpp"
#include "results/store/restoration.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace analysis {

std::optional<double> json_number(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* p = &j;
  for (const char* k : path) {
    if (!p->is_object() || !p->contains(k)) return std::nullopt;
    p = &(*p)[k];
  }
  if (!p->is_number()) return std::nullopt;
  const double v = p->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

namespace {

/// The fields outcome_json records (harness/case/SPEC.md): OOM kills, the trigger and its
/// window-rule counterfactual, the load, steal, the harness's own cost, the lost phase.
void outcome_fields(const nlohmann::json& outcome, std::optional<std::int64_t> pressure_start_ns, CaseOutcome& o) {
  if (auto v = json_number(outcome, {"oom_kills", "bg"})) o.oom_kills_bg = std::llround(*v);
  if (auto v = json_number(outcome, {"oom_kills", "fg"})) o.oom_kills_fg = std::llround(*v);
  if (auto v = json_number(outcome, {"trigger", "since_pressure_start_ns"})) o.trigger_delay_s = *v / 1e9;
  if (outcome.is_object() && outcome.contains("trigger") && outcome["trigger"].is_object() &&
      outcome["trigger"].contains("earlier_without_length_rule_t_ns")) {
    o.length_rule_counterfactual_recorded = true;
    const auto fired = json_number(outcome, {"trigger", "t_ns"});
    const auto since = json_number(outcome, {"trigger", "since_pressure_start_ns"});
    const auto cf = json_number(outcome, {"trigger", "earlier_without_length_rule_t_ns"});
    // Pressure start from the firing (t_ns - since) or the phase rows' start.
    std::optional<double> start;
    if (fired && since) start = *fired - *since;
    else if (pressure_start_ns) start = static_cast<double>(*pressure_start_ns);
    if (cf && start) o.without_length_rule_delay_s = (*cf - *start) / 1e9;
  }
  o.achieved_rate_mib_s = json_number(outcome, {"load", "achieved_rate_mib_s"});
  o.nominal_rate_mib_s = json_number(outcome, {"load", "nominal_rate_mib_s"});
  o.episode_fraction = json_number(outcome, {"load", "episode", "fraction_of_pressure"});
  o.steal_total_us = json_number(outcome, {"steal", "total_us"});
  if (auto v = json_number(outcome, {"harness_self", "cpu_ns"})) o.harness_cpu_s = *v / 1e9;
  o.harness_peak_rss_kib = json_number(outcome, {"harness_self", "peak_rss_kib"});
  if (outcome.is_object() && outcome.contains("lost") && outcome["lost"].is_object() &&
      outcome["lost"].contains("phase") && outcome["lost"]["phase"].is_string())
    o.lost_phase = outcome["lost"]["phase"].get<std::string>();
}

/// What the case's rows record beside outcome_json: the trigger delay when the outcome lacks it,
/// the case's span, the restoration's duration, the judged and irregular windows.
void table_fields(results::Db& db, const std::string& case_id, std::optional<std::int64_t> pressure_start_ns,
                  CaseOutcome& o) {
  {
    // What the policy did (the events of CaseOutcome::trigger_events ...), and the trigger time
    // when outcome_json lacks it: the first trigger or would_trigger event.
    std::optional<std::int64_t> first_trigger;
    for (const auto& e : results::event_kind_summaries(db, case_id,
                                                       {"trigger", "would_trigger", "backend_on", "memory_high_set"})) {
      const int n = static_cast<int>(e.count);
      if (e.kind == "trigger") o.trigger_events = n;
      if (e.kind == "would_trigger") o.would_trigger_events = n;
      if (e.kind == "backend_on") o.backend_on_events = n;
      if (e.kind == "memory_high_set") o.memory_high_events = n;
      if (e.kind == "trigger" || e.kind == "would_trigger")
        first_trigger = first_trigger ? std::min(*first_trigger, e.first_ns) : e.first_ns;
    }
    if (!o.trigger_delay_s && pressure_start_ns && first_trigger)
      o.trigger_delay_s = static_cast<double>(*first_trigger - *pressure_start_ns) / 1e9;
  }
  std::optional<std::int64_t> first_start, last_end;  // over warmup, pressure and recovery
  for (const auto& p : results::read_phases(db, case_id)) {
    if (p.phase != "warmup" && p.phase != "pressure" && p.phase != "recovery") continue;
    first_start = std::min(first_start.value_or(p.start_ns), p.start_ns);
    if (p.end_ns) last_end = std::max(last_end.value_or(*p.end_ns), *p.end_ns);
  }
  if (first_start && last_end && *last_end > *first_start)
    o.case_span_s = static_cast<double>(*last_end - *first_start) / 1e9;
  if (const auto r = results::read_restoration(db, case_id)) o.restoration_s = static_cast<double>(r->end_ns - r->start_ns) / 1e9;
  if (const auto w = results::window_counts(db, case_id)) {
    o.windows = w->windows;
    o.irregular_windows = w->irregular;
  }
}

/// The case's memory.reclaim writes in start order (a column the DB's schema version lacks: not
/// measured).
std::vector<ReclaimRecord> reclaim_records(results::Db& db, const std::string& case_id) {
  std::vector<ReclaimRecord> out;
  for (const auto& a : results::read_reclaim_actions(db, case_id)) {
    ReclaimRecord r;
    r.requested_bytes = a.requested_bytes;
    r.start_ns = a.start_ns;
    r.duration_ns = a.duration_ns;
    r.write_errno = static_cast<int>(a.write_errno);
    r.achieved_bytes = a.achieved_bytes;
    r.concurrent_estimate_bytes = a.concurrent_estimate_bytes;
    r.achieved_conservative_bytes = a.achieved_conservative_bytes;
    r.achieved_counter = a.achieved_counter;
    r.write_cpu_us = a.write_cpu_us;
    out.push_back(r);
  }
  return out;
}

}  // namespace

CaseOutcome load_case_outcome(results::Db& db, const std::string& case_id, const nlohmann::json& outcome,
                              std::optional<std::int64_t> pressure_start_ns) {
  CaseOutcome o;
  outcome_fields(outcome, pressure_start_ns, o);
  table_fields(db, case_id, pressure_start_ns, o);
  o.reclaim = reclaim_records(db, case_id);
  return o;
}

}  // namespace analysis
