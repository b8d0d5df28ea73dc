// Per-case outcome records (see case_outcome.hpp).
#include "analysis/case_outcome.hpp"

#include "results/db.hpp"

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
  if (!o.trigger_delay_s && pressure_start_ns) {
    results::Stmt st(db, "SELECT MIN(t_ns) FROM controller_events WHERE case_id = ?1 AND kind IN ('trigger','would_trigger')");
    st.bind(1, case_id);
    if (st.step() && !st.is_null(0)) o.trigger_delay_s = static_cast<double>(st.int64(0) - *pressure_start_ns) / 1e9;
  }
  {
    results::Stmt st(db, "SELECT MIN(start_ns), MAX(end_ns) FROM phases WHERE case_id = ?1 AND phase IN ('warmup','pressure','recovery')");
    st.bind(1, case_id);
    if (st.step() && !st.is_null(0) && !st.is_null(1) && st.int64(1) > st.int64(0))
      o.case_span_s = static_cast<double>(st.int64(1) - st.int64(0)) / 1e9;
  }
  if (has_table(db, "restoration")) {
    results::Stmt st(db, "SELECT end_ns - start_ns FROM restoration WHERE case_id = ?1");
    st.bind(1, case_id);
    if (st.step() && !st.is_null(0)) o.restoration_s = static_cast<double>(st.int64(0)) / 1e9;
  }
  if (has_column(db, "controller_events", "irregular")) {
    results::Stmt st(db, "SELECT COUNT(irregular), COALESCE(SUM(irregular = 1), 0) FROM controller_events "
                         "WHERE case_id = ?1 AND kind = 'window'");
    st.bind(1, case_id);
    if (st.step() && st.int64(0) > 0) {
      o.windows = st.int64(0);
      o.irregular_windows = st.int64(1);
    }
  }
}

/// The case's memory.reclaim writes in start order (the columns of the DB's schema version).
std::vector<ReclaimRecord> reclaim_records(results::Db& db, const std::string& case_id) {
  const bool v2 = has_column(db, "reclaim_actions", "achieved_conservative_bytes");
  results::Stmt ra(db, v2 ? "SELECT requested_bytes, start_ns, duration_ns, write_errno, achieved_bytes, "
                            "concurrent_estimate_bytes, achieved_conservative_bytes, achieved_counter "
                            "FROM reclaim_actions WHERE case_id = ?1 ORDER BY start_ns"
                          : "SELECT requested_bytes, start_ns, duration_ns, write_errno, achieved_bytes "
                            "FROM reclaim_actions WHERE case_id = ?1 ORDER BY start_ns");
  ra.bind(1, case_id);
  std::map<std::int64_t, std::int64_t> cpu_us;  // start_ns -> write_cpu_us (schema version 4)
  if (has_column(db, "reclaim_actions", "write_cpu_us")) {
    results::Stmt q(db, "SELECT start_ns, write_cpu_us FROM reclaim_actions WHERE case_id = ?1 AND write_cpu_us IS NOT NULL");
    q.bind(1, case_id);
    while (q.step()) cpu_us[q.int64(0)] = q.int64(1);
  }
  std::vector<ReclaimRecord> out;
  while (ra.step()) {
    ReclaimRecord r;
    r.requested_bytes = ra.int64(0);
    r.start_ns = ra.int64(1);
    r.duration_ns = ra.int64(2);
    r.write_errno = static_cast<int>(ra.int64(3));
    r.achieved_bytes = ra.opt_int64(4);
    if (v2) {
      r.concurrent_estimate_bytes = ra.opt_int64(5);
      r.achieved_conservative_bytes = ra.opt_int64(6);
      r.achieved_counter = ra.opt_text(7);
    }
    if (auto it = cpu_us.find(r.start_ns); it != cpu_us.end()) r.write_cpu_us = it->second;
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
