#pragma once
// The controller: feeds each telemetry sample's bg `some` total to the study's trigger
// predicate, records every evaluated window as a controller event, and performs the
// configuration's action exactly once when the predicate fires (docs/DESIGN.md "Controller").
//
// Evaluation window (decision documented in harness/case/SPEC.md): the predicate is armed
// for the pressure phase only. The sample at the pressure-start tick is the baseline
// (taken just before pressure-gen starts); windows closing at ticks in
// (pressure_start_ns, pressure_end_ns] are evaluated. Warmup and recovery windows are
// not evaluated (their PSI is in telemetry).
//
// The response to a firing window is the policy's (harness/case/control/policy.hpp): with a
// no-action note the window is recorded as `would_trigger` (the note in its detail) and
// nothing else happens (static-zram); otherwise it is recorded as `trigger` and the action
// callback runs (swapon zram, start the memory.reclaim thread), appending its own events.
// Then, on every tick of the pressure and recovery phases, the tick hook runs (the
// policy's on_tick), told whether and when the trigger has fired.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/case/run/bundle.hpp"
#include "harness/case/control/policy.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/case/run/telemetry_sample.hpp"
#include "harness/case/control/trigger.hpp"

namespace harness::case_ {

class Controller {
 public:
  /// `action(t_ns, events)` runs once, on the firing tick, unless the configuration takes
  /// no action; it must not block for long (bounded-reclaim starts a thread).
  using Action = std::function<void(std::int64_t t_ns, std::vector<ControllerEvent>& events)>;

  /// `tick(input, events)` runs on every sample whose phase is pressure or recovery, after the
  /// trigger has judged it (policy.hpp TickInput); it must not block.
  using TickHook = std::function<void(const TickInput& tick, std::vector<ControllerEvent>& events)>;

  /// `no_action_note`: set = the policy takes no action at the trigger (`would_trigger` with
  /// this note in the event's detail; `action` is never called).
  Controller(const TriggerSpec& trigger, std::int64_t pressure_start_ns, std::int64_t pressure_end_ns, Action action,
             std::optional<std::string> no_action_note = std::nullopt, TickHook tick = {});

  /// Handles one tick's sample; appends events (window, trigger/would_trigger, error).
  void on_sample(const TelemetrySample& s, std::vector<ControllerEvent>& events);

  const TriggerPredicate& predicate() const { return predicate_; }

 private:
  void judge(const TelemetrySample& s, std::vector<ControllerEvent>& events);

  TriggerPredicate predicate_;
  std::optional<std::string> no_action_note_;
  std::int64_t start_ns_, end_ns_;
  Action action_;
  TickHook tick_;
  std::optional<std::int64_t> fired_t_ns_;
};

}  // namespace harness::case_
