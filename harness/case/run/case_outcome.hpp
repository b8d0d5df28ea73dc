#pragma once
// The typed outcome of a case: cases.outcome_json (SPEC.md "Executor decisions" and
// "Version 2 additions" list its keys). Each piece that measures fills its own member;
// outcome_json() turns the whole into the JSON document once, when the bundle is written.
// Absent (nullopt) members are keys the case never reached (e.g. no setup_steps when
// qualification failed); null values inside a member are readings that could not be made.
// Adding a key: a member here (or in the member's struct) and a line in outcome_json().
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case/host/backend.hpp"
#include "harness/case/host/case_cgroups.hpp"
#include "harness/case/run/case_clock.hpp"
#include "harness/case/host/children.hpp"
#include "harness/case/host/confounds.hpp"
#include "harness/case/run/harness_self.hpp"
#include "harness/case/run/load_summary.hpp"
#include "harness/case/control/reclaim_record.hpp"
#include "harness/case/host/restoration.hpp"
#include "harness/case/host/restoration_check.hpp"
#include "harness/case/run/trace_import.hpp"
#include "harness/case/control/trigger.hpp"
#include "harness/case/spec/variant.hpp"
#include "harness/case/host/vm_state.hpp"

namespace harness::case_ {

/// outcome_json.source: the build of the executor (harness/build_info.hpp).
struct SourceRecord {
  std::string commit;
  bool dirty = false;
};

/// outcome_json.trigger.
struct TriggerOutcome {
  bool fired = false;
  std::string kind;  ///< "trigger" | "would_trigger" (a configuration without action)
  std::optional<std::int64_t> t_ns, since_pressure_start_ns;  ///< when it fired
  std::int64_t windows = 0;            ///< windows judged in the pressure phase
  std::int64_t irregular_windows = 0;  ///< of those, irregular length (rule: ours, trigger.hpp)
  /// CLOCK_MONOTONIC ns at which it would have fired without the window-length rule, when
  /// earlier than `t_ns` (or it never fired); null = the rule delayed nothing (trigger.hpp).
  std::optional<std::int64_t> earlier_without_length_rule_t_ns;
};

/// The trigger's record: fired or not, the kind ("would_trigger" when the configuration
/// takes no action, else "trigger") and, when it fired, its tick and its distance from the
/// pressure start; the windows judged, the irregular ones, and the counterfactual firing
/// time without the window-length rule.
TriggerOutcome trigger_outcome(const TriggerPredicate& p, bool acts, std::int64_t pressure_start_ns);

/// outcome_json.reclaim: the bounded-reclaim record, null in the other configurations.
struct ReclaimOutcome {
  std::optional<ReclaimRecord> record;
  std::int64_t page_size_bytes = 4096;  ///< for the record's achieved figures
};

/// outcome_json.zram: null when no device was taken.
struct ZramOutcome {
  std::optional<ZramRecord> device;
};

/// outcome_json.vm_state (vm_state.hpp).
struct VmStateOutcome {
  std::optional<VmStart> start;  ///< after the leftover cleanup
  std::optional<VmState> end;    ///< after restoration
  std::optional<BaselineCheck> baseline_check;
};

/// outcome_json.clocksource (start/end; `changed` is derived).
struct ClocksourceRecord {
  std::optional<std::string> start, end;
};

struct CaseOutcome {
  // --- before the case ---------------------------------------------------------------
  SourceRecord source;
  std::optional<bool> timing_claims_valid;       ///< accelerator kvm or real
  std::vector<StepRecord> leftover_steps;         ///< always written (empty before the cleanup ran)
  std::optional<VmStateOutcome> vm_state;
  std::optional<VariantApplier> variant;          ///< the A/B variant as applied and restored
  std::optional<bool> qualification_skipped;      ///< true with --skip-qualification
  // --- setup -----------------------------------------------------------------------
  std::optional<std::vector<StepRecord>> setup_steps;
  std::optional<std::string> zram_device;         ///< "/dev/zramN" of the case
  std::optional<ZramOutcome> zram;
  // --- the schedule -------------------------------------------------------------------
  std::optional<CaseClock> schedule;
  std::map<std::string, std::vector<std::string>> argv;  ///< workload -> argv; absent while empty
  std::optional<std::int64_t> missed_ticks;
  std::optional<int> cancelled_by_signal;
  std::optional<TriggerOutcome> trigger;
  std::optional<ReclaimOutcome> reclaim;
  std::optional<StepRecord> backend_on;           ///< delayed-activation's swapon at the trigger
  // --- restoration and after ----------------------------------------------------------
  std::optional<OomOutcome> oom;                  ///< oom_kills and oom_events
  std::optional<RestorationVerdict> restoration;
  std::optional<std::vector<ChildRecord>> processes;
  std::optional<std::string> restoration_error;   ///< restoration itself threw
  std::optional<std::map<std::string, CanaryTraceCount>> canary_requests;
  std::optional<LoadSummary> load;
  bool workload_started = false;
  // --- confounds, at the end ----------------------------------------------------------
  ClocksourceRecord clocksource;
  StealSummary steal;
  HarnessSelf harness_self;
};

/// The outcome_json document of `o` (SPEC.md).
nlohmann::json outcome_json(const CaseOutcome& o);

}  // namespace harness::case_
