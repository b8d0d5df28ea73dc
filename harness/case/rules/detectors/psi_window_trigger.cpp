// Detector `psi_window_trigger`: the study's PSI window trigger (trigger.hpp: bg `some`
// total grew by >= min_increase_us in each of consecutive_windows windows (one telemetry tick each,
// a window of irregular length never counts),
// judged over the pressure phase only, exactly as the controller judges it). Its own
// TriggerPredicate, fed the same samples as the controller's: without parameters it is the
// case's trigger (spec.trigger: the study's 1 ms, 3 windows, 1000 ms) and fires on the same
// tick; each parameter given overrides the case's.
// Holds from the tick it fires on to the end of the case (with mode "once": acts at the firing).
#include "harness/case/rules/blocks.hpp"

#include "harness/case/control/trigger.hpp"

namespace harness::case_::rules {

namespace {
class PsiWindowTrigger final : public Detector {
 public:
  explicit PsiWindowTrigger(const nlohmann::json& p) : p_(p) {}

  bool is_case_trigger() const override { return p_.empty(); }

  Observation observe(const TickInput& tick, ActionContext& ctx) override {
    if (!pred_) {
      TriggerSpec spec = ctx.spec.trigger;
      if (p_.contains("min_increase_us")) spec.min_increase_us = p_.at("min_increase_us").get<std::int64_t>();
      if (p_.contains("consecutive_windows")) spec.consecutive_windows = p_.at("consecutive_windows").get<int>();
      pred_.emplace(spec);
    }
    const TelemetrySample& s = tick.sample;
    Observation o;
    // Armed for the pressure phase only (controller.hpp): the pressure-start tick is the baseline.
    if (s.t_ns >= tick.pressure_start_ns && s.t_ns <= tick.pressure_end_ns) {
      if (!s.bg_some_us) {
        pred_->reset_baseline();
        o.inputs["window"] = "bg memory.pressure unreadable: run reset";
      } else if (auto w = pred_->feed(s.t_ns, read_time_ns(s), *s.bg_some_us)) {
        o.inputs["delta_us"] = w->delta_us;
        o.inputs["consecutive"] = w->consecutive;
      }
    }
    const auto& spec = pred_->spec();
    o.inputs["min_increase_us"] = spec.min_increase_us;
    o.inputs["consecutive_windows"] = spec.consecutive_windows;
    if (pred_->fired()) {
      o.inputs["fired_t_ns"] = *pred_->fired_at_ns();
      o.fired_t_ns = pred_->fired_at_ns();
    }
    o.holds = pred_->fired();
    return o;
  }

 private:
  nlohmann::json p_;
  std::optional<TriggerPredicate> pred_;
};
}  // namespace

DetectorInfo detector_psi_window_trigger() {
  DetectorInfo d;
  d.name = "psi_window_trigger";
  d.summary = "the study's PSI trigger (bg some grew >= min_increase_us in consecutive_windows windows); holds from its firing on";
  d.params = {
      param_def("min_increase_us", ParamKind::Integer, "us", nullptr, 1, 60'000'000,
                  "growth of bg PSI some in one window that counts, us (absent: the case's trigger; study: 1000)"),
      param_def("consecutive_windows", ParamKind::Integer, "windows", nullptr, 1, 3600,
                  "counting windows in a row that fire (absent: the case's trigger; study: 3)")
  };
  d.make = [](const nlohmann::json& p) { return std::make_unique<PsiWindowTrigger>(p); };
  return d;
}

}  // namespace harness::case_::rules
