#pragma once
// The configurations' actions (study; docs/DESIGN.md "Configurations"): one file per
// configuration under harness/case/actions/, each implementing this interface, chosen by
// spec.configuration through make_action (registry.cpp). An action says
//   - what the backend looks like at the start of the case (zram swapped on, or prepared
//     and left off),
//   - what happens when the PSI trigger fires (nothing and a `would_trigger` event, or a
//     `trigger` event and its own work, once per case),
//   - what it adds to the record once the schedule is over (its events, rows and
//     outcome_json keys).
// A fourth configuration is a new file here, one line in registry.cpp and its spelling in
// the spec (spec.hpp Configuration).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/case/backend.hpp"
#include "harness/case/bundle.hpp"
#include "harness/case/case_outcome.hpp"
#include "harness/case/spec.hpp"
#include "harness/case/telemetry_sample.hpp"
#include "harness/kernel/cgroup.hpp"

namespace harness::case_ {

/// What an action may use while the case runs.
struct ActionContext {
  const CaseSpec& spec;
  Backend& backend;
  harness::kernel::Cgroup bg;                              ///< the case's bg cgroup
  const std::vector<TelemetrySample>& telemetry;  ///< the samples so far (the trigger tick's is the last)
  std::int64_t page_size_bytes = 4096;
  std::int64_t reclaim_settle_ns = 2'200'000'000;  ///< ExecutorOptions::reclaim_settle_ns
};

class ConfigurationAction {
 public:
  virtual ~ConfigurationAction() = default;

  /// The backend at the start of the case (Backend::prepare).
  virtual ZramAtStart zram_at_start() const = 0;

  /// nullopt (the default): the firing window is a `trigger` event and on_trigger() runs.
  /// A note: the configuration takes no action; the window is a `would_trigger` event whose
  /// detail carries the note, and outcome_json.trigger.kind is "would_trigger".
  virtual std::optional<std::string> no_action_note() const { return std::nullopt; }

  /// The trigger fired at tick `t_ns` (its `trigger` event is already in `events`); runs
  /// once, on the controller's tick, and must not block for long.
  virtual void on_trigger(std::int64_t /*t_ns*/, ActionContext& /*ctx*/, std::vector<ControllerEvent>& /*events*/) {}

  /// After the schedule, once the workloads are reaped and before restoration: adds the
  /// action's events and rows to `bundle` and its keys to `outcome`.
  virtual void finish(ActionContext& /*ctx*/, CaseBundle& /*bundle*/, CaseOutcome& /*outcome*/) {}
};

/// The action of `conf` (registry.cpp).
std::unique_ptr<ConfigurationAction> make_action(Configuration conf);

}  // namespace harness::case_
