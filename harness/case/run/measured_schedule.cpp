// The work of one tick of a case (measured_schedule.hpp).
#include "harness/case/run/measured_schedule.hpp"

#include <fmt/format.h>

#include "harness/case/host/confounds.hpp"

namespace harness::case_ {

MeasuredSchedule::MeasuredSchedule(PhaseFile& phase, SelfAccounting& self, TelemetrySampler& sampler,
                                   Controller& controller, Children& children, const Workloads& workloads,
                                   std::int64_t pressure_gen_duration_s, const harness::kernel::Cgroup& bg, CaseBundle& bundle,
                                   CaseOutcome& outcome)
    : phase_(phase),
      self_(self),
      sampler_(sampler),
      controller_(controller),
      children_(children),
      workloads_(workloads),
      pressure_gen_duration_s_(pressure_gen_duration_s),
      bg_(bg),
      bundle_(bundle),
      outcome_(outcome) {}

TickVerdict MeasuredSchedule::operator()(const Tick& tick) {
  // The tick that opens pressure reports the phase only once pressure-gen has started (below):
  // a pressure-gen that cannot start is an infrastructure failure before the pressure phase
  // (infra_failed, rerun), never a case that reached it (lost; docs/PROTOCOL.md).
  if (!tick.opens_pressure) phase_.report(tick.phase);
  self_.schedule_start();
  const std::int64_t cpu_before = thread_cpu_ns();
  bundle_.telemetry.push_back(sampler_.sample(tick.t_ns, tick.phase));
  auto& s = bundle_.telemetry.back();
  const std::int64_t sample_cpu = thread_cpu_ns() - cpu_before;
  s.extra["sample_cpu_ns"] = sample_cpu;
  telemetry_cpu_ns_ += sample_cpu;
  if (tick.missed_before) s.extra["missed_ticks"] = tick.missed_before;
  controller_.on_sample(s, bundle_.events);
  if (tick.opens_pressure) {
    try {
      const auto& c = children_.spawn("pressure-gen", workloads_.pressure_gen(pressure_gen_duration_s_), bg_);
      outcome_.argv[c.name] = c.argv;
    } catch (const std::exception& e) {
      failure_ = fmt::format("starting pressure-gen: {}", e.what());
      return TickVerdict::Stop;
    }
    phase_.report(tick.phase);
  }
  if (tick.closes_pressure)
    if (auto* c = children_.find("pressure-gen")) children_.term(*c);
  return TickVerdict::Continue;
}

}  // namespace harness::case_
