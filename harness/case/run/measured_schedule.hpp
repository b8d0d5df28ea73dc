#pragma once
// What a case does at each tick of its schedule (the driver of tick_loop.hpp):
//   1. the phase for the agent (phase_file.hpp);
//   2. the window read: one telemetry sample (telemetry.hpp), with the thread CPU it took
//      (extra_json.sample_cpu_ns) and the ticks missed before it (extra_json.missed_ticks);
//   3. the controller: the sample's bg PSI to the trigger, which may fire the
//      arm's policy: its trigger action and its per-tick hook (controller.hpp, policy.hpp);
//   4. pressure-gen: started in bg right after the sample of the tick that opens the
//      pressure phase (that sample is the controller's baseline), SIGTERM at the tick that
//      closes it. A pressure-gen that cannot be started stops the schedule (infra_failed).
#include <cstdint>
#include <optional>
#include <string>

#include "harness/case/run/bundle.hpp"
#include "harness/case/run/case_outcome.hpp"
#include "harness/case/host/children.hpp"
#include "harness/case/control/controller.hpp"
#include "harness/case/run/harness_self.hpp"
#include "harness/case/run/phase_file.hpp"
#include "harness/case/run/telemetry.hpp"
#include "harness/case/run/tick_loop.hpp"
#include "harness/case/spec/workloads.hpp"

namespace harness::case_ {

class MeasuredSchedule {
 public:
  /// Everything is borrowed for the schedule's duration. Samples and events go to `bundle`,
  /// pressure-gen's argv to `outcome`; `pressure_gen_duration_s` is its --duration-s safety net.
  MeasuredSchedule(PhaseFile& phase, SelfAccounting& self, TelemetrySampler& sampler, Controller& controller,
                   Children& children, const Workloads& workloads, std::int64_t pressure_gen_duration_s,
                   const harness::kernel::Cgroup& bg, CaseBundle& bundle, CaseOutcome& outcome);

  TickVerdict operator()(const Tick& tick);

  /// Thread CPU of all samples so far, ns (harness_self.schedule.telemetry_cpu_ns).
  std::int64_t telemetry_cpu_ns() const { return telemetry_cpu_ns_; }
  /// Why the schedule was stopped early ("starting pressure-gen: ..."), if it was.
  const std::optional<std::string>& failure() const { return failure_; }

 private:
  PhaseFile& phase_;
  SelfAccounting& self_;
  TelemetrySampler& sampler_;
  Controller& controller_;
  Children& children_;
  const Workloads& workloads_;
  std::int64_t pressure_gen_duration_s_;
  const harness::kernel::Cgroup& bg_;
  CaseBundle& bundle_;
  CaseOutcome& outcome_;
  std::int64_t telemetry_cpu_ns_ = 0;
  std::optional<std::string> failure_;
};

}  // namespace harness::case_
