// memory-high: throttling instead of reclaim. When the study's PSI trigger fires, bg
// memory.high is set to `fraction` x bg memory.current (the trigger tick's sample); the old
// memory.high is written back at finish() (restoration then removes the cgroup anyway).
// Source: TMO (Weiner et al., ASPLOS 2022): Senpai first drove cgroup memory limits (memory.high) before
// memory.reclaim replaced them, because a limit can throttle a growing workload; this arm
// measures that older lever against the study's one reclaim write.
//
// A memory.high write below the usage makes the kernel reclaim down to it in the writing
// task (6.1 memory_high_write), so the write runs on its own thread (memory_high_writer.hpp);
// the tick only starts it and later records it. Events: `policy_decision` at the
// trigger (the inputs and the value to write, the old value), `memory_high_set` once the
// write returned (errno, duration), `memory_high_restore` at finish(). A failed write is
// data (errno in the event); the case goes on.
// Settings rule (settings_check): with a static bg memory.high (cgroups.bg_memory_high_mib),
// fraction below 1: bg then sits at that limit, and memory.high = 1 x memory.current would
// write the campaign's own limit back, no lever at all.
#include "harness/case/control/policy.hpp"

#include "harness/case/control/memory_high_writer.hpp"
#include "harness/kernel/errors.hpp"

#include <cmath>

namespace harness::case_ {

namespace {
class MemoryHigh final : public Policy {
 public:
  explicit MemoryHigh(double fraction) : fraction_(fraction) {}

  ZramAtStart zram_at_start() const override { return ZramAtStart::On; }

  void on_trigger(std::int64_t t_ns, ActionContext& ctx, std::vector<ControllerEvent>& events) override {
    nlohmann::json d{{"policy", "memory-high"}, {"trigger_t_ns", t_ns}, {"fraction", fraction_}};
    std::optional<std::int64_t> current;
    if (!ctx.telemetry.empty()) current = ctx.telemetry.back().bg_current_bytes;
    d["current_from"] = "sample";
    if (!current) {  // not in this tick's sample: read it now (one small read)
      d["current_from"] = "memory.current";
      try {
        current = static_cast<std::int64_t>(ctx.bg.memory_current_bytes());
      } catch (const harness::kernel::Error& e) {
        d["current_error"] = e.what();
      }
    }
    try {
      old_ = ctx.bg.memory_high();
      d["old_memory_high"] = memory_limit_json(*old_);
    } catch (const harness::kernel::Error& e) {
      d["old_error"] = e.what();  // nothing to restore to: finish() leaves it to restoration
    }
    d["memory_current_bytes"] = current ? nlohmann::json(*current) : nlohmann::json();
    if (!current) {
      d["action"] = "none";
      d["reason"] = "bg memory.current not read";
    } else {
      const auto high = static_cast<std::uint64_t>(std::floor(fraction_ * static_cast<double>(*current)));
      d["action"] = "set";
      d["memory_high_bytes"] = high;
      bg_.emplace(ctx.bg);
      writer_.start(*bg_, high);
    }
    events.push_back({t_ns, "policy_decision", std::nullopt, std::nullopt, std::nullopt, std::nullopt, d});
  }

  void on_tick(const TickInput&, ActionContext&, std::vector<ControllerEvent>& events) override {
    if (auto e = writer_.collect(tag())) events.push_back(*e);
  }

  void finish(ActionContext&, CaseBundle& bundle, CaseOutcome&) override {
    if (auto e = writer_.wait(tag())) bundle.events.push_back(*e);
    if (!bg_ || !old_) return;
    bundle.events.push_back(restore_memory_high(*bg_, *old_, tag()));
  }

 private:
  static nlohmann::json tag() { return {{"policy", "memory-high"}}; }

  double fraction_;
  std::optional<harness::kernel::Cgroup> bg_;
  std::optional<harness::kernel::MemoryLimit> old_;
  MemoryHighWriter writer_;
};
}  // namespace

PolicyInfo policy_memory_high() {
  PolicyInfo p;
  p.name = "memory-high";
  p.summary = "at the PSI trigger, bg memory.high = fraction x bg memory.current (throttling, not reclaim); restored at the end";
  p.source = "TMO (Weiner et al., ASPLOS 2022): Senpai's earlier lever, cgroup memory limits (memory.high), before memory.reclaim replaced it";
  p.params = {param_def("fraction", ParamKind::Number, "ratio", 0.9, 0.01, 1,
                        "new memory.high as a share of bg memory.current at the trigger (ours: 0.9)")};
  p.settings_check = [](const nlohmann::json& j, const ArmSettings& s) -> std::optional<ParamError> {
    if (s.bg_memory_high_mib && j.at("fraction").get<double>() >= 1)
      return param_error("fraction", "must be below 1 when cgroups.bg_memory_high_mib is set (" +
                                         readable_number(*s.bg_memory_high_mib) +
                                         " MiB): bg sits at that limit, and 1 x memory.current writes it back unchanged");
    return std::nullopt;
  };
  p.make = [](const nlohmann::json& j) { return std::make_unique<MemoryHigh>(j.at("fraction").get<double>()); };
  return p;
}

}  // namespace harness::case_
