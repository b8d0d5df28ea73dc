#pragma once
// Per-case outcome records beyond latency, for the report's outcome counts and secondary tables:
// outcome_json keys (harness/case/SPEC.md: oom_kills, trigger, load, steal, harness_self, lost),
// the memory.reclaim write (reclaim_actions), irregular controller windows (controller_events).
// Every field is optional: absent column / key = "not measured", never zero.
#include "results/db.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// One memory.reclaim write (results/schema.sql reclaim_actions). Bytes; ns.
struct ReclaimRecord {
  std::int64_t requested_bytes = 0;
  std::int64_t start_ns = 0, duration_ns = 0;
  int write_errno = 0;
  std::optional<std::int64_t> achieved_bytes;               ///< across the write (counter after - before)
  std::optional<std::int64_t> concurrent_estimate_bytes;    ///< limit reclaim beside the write (estimate)
  std::optional<std::int64_t> achieved_conservative_bytes;  ///< max(0, achieved - estimate)
  std::optional<std::string> achieved_counter;              ///< pgsteal_proactive | pgsteal
  std::optional<std::int64_t> write_cpu_us;                 ///< CPU time of the writing thread in write(2), us
};

/// What the report needs about one case's outcome besides latency.
struct CaseOutcome {
  std::optional<std::int64_t> oom_kills_bg, oom_kills_fg;  ///< outcome_json.oom_kills {bg, fg}
  std::optional<double> trigger_delay_s;     ///< trigger (or would_trigger) time since pressure start, s
  std::vector<ReclaimRecord> reclaim;        ///< memory.reclaim writes, by start_ns
  /// Controller events that say what the case's policy did (results/schema.sql controller_events
  /// kind; counts): the study's trigger fired (`trigger`), or would have for a policy without an
  /// action there (`would_trigger`); zram swapped on (`backend_on`); bg memory.high written
  /// (`memory_high_set`). A memory.reclaim write is a row of `reclaim` instead.
  int trigger_events = 0, would_trigger_events = 0, backend_on_events = 0, memory_high_events = 0;
  std::optional<std::int64_t> windows;       ///< controller windows judged with a recorded `irregular`
  std::optional<std::int64_t> irregular_windows;  ///< of those, irregular = 1 (nullopt: not measured)
  /// The window-length rule's counterfactual (outcome_json.trigger.earlier_without_length_rule_t_ns,
  /// harness/case/control/trigger.hpp): false = not recorded (older bundle).
  bool length_rule_counterfactual_recorded = false;
  /// When the trigger would have fired without the rule, since pressure start, s; nullopt = the
  /// rule delayed nothing (or not recorded).
  std::optional<double> without_length_rule_delay_s;
  std::optional<double> achieved_rate_mib_s, nominal_rate_mib_s;  ///< outcome_json.load, MiB/s
  std::optional<double> episode_fraction;    ///< outcome_json.load.episode.fraction_of_pressure
  std::optional<double> steal_total_us;      ///< outcome_json.steal.total_us (warmup..recovery), us
  std::optional<double> harness_cpu_s;       ///< outcome_json.harness_self.cpu_ns / 1e9, s
  std::optional<double> harness_peak_rss_kib;  ///< outcome_json.harness_self.peak_rss_kib, KiB
  std::optional<double> case_span_s;         ///< warmup start .. recovery end (phases), s
  std::optional<std::string> lost_phase;     ///< lost case: outcome_json.lost.phase (last phase seen)
  std::optional<double> restoration_s;       ///< restoration table end_ns - start_ns, s (nullopt: no row)
};

/// Number at a JSON path (e.g. {"load", "achieved_rate_mib_s"}), nullopt when any key is absent
/// or the value is not a finite number.
std::optional<double> json_number(const nlohmann::json& j, std::initializer_list<const char*> path);

/// Reads the outcome of `case_id` from `db` and its parsed outcome_json (null when absent).
/// pressure_start_ns: the case's pressure phase start (0 when unknown: trigger delay then only from
/// outcome_json.trigger.since_pressure_start_ns). Columns absent from an older DB are "not measured".
CaseOutcome load_case_outcome(results::Db& db, const std::string& case_id, const nlohmann::json& outcome,
                              std::optional<std::int64_t> pressure_start_ns);

}  // namespace analysis
