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
// Actions: static-zram records `would_trigger` and does nothing; delayed-activation and
// bounded-reclaim record `trigger` and call the action callback (swapon zram /
// start the memory.reclaim thread), which appends its own events.
#include <cstdint>
#include <functional>
#include <vector>

#include "harness/case/bundle.hpp"
#include "harness/case/spec.hpp"
#include "harness/case/telemetry_sample.hpp"
#include "harness/case/trigger.hpp"

namespace hcase {

class Controller {
 public:
  /// `action(t_ns, events)` runs once, on the firing tick, for the two triggered
  /// configurations; it must not block for long (bounded-reclaim starts a thread).
  using Action = std::function<void(std::int64_t t_ns, std::vector<ControllerEvent>& events)>;

  Controller(const TriggerSpec& trigger, Configuration conf, std::int64_t pressure_start_ns,
             std::int64_t pressure_end_ns, Action action);

  /// Handles one tick's sample; appends events (window, trigger/would_trigger, error).
  void on_sample(const TelemetrySample& s, std::vector<ControllerEvent>& events);

  const TriggerPredicate& predicate() const { return predicate_; }

 private:
  TriggerPredicate predicate_;
  Configuration conf_;
  std::int64_t start_ns_, end_ns_;
  Action action_;
};

}  // namespace hcase
