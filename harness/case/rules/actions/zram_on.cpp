// Action `zram_on`: swap on the case's zram backend (Backend::activate, as delayed-activation
// does at the trigger; with backend.delayed_swapfile off the swapfile joins right after).
// Meant for zram_at_start: prepared; with zram already on the step says EALREADY. The step,
// errno included, is the `backend_on` event (detail.step, as delayed-activation's) and, for
// the first one, outcome_json.backend_on: a failed swapon is an outcome, the case goes on.
#include "harness/case/rules/blocks.hpp"

#include "harness/case/spec/spec.hpp"
#include "harness/kernel/fs.hpp"

namespace harness::case_::rules {

namespace {
class ZramOn final : public RuleAction {
 public:
  Acted act(const Firing& by, const TickInput& tick, ActionContext& ctx, Shared& shared, std::vector<ControllerEvent>& events) override {
    const StepRecord step = ctx.backend.activate();
    if (!shared.backend_on) shared.backend_on = step;
    // delayed-activation's fields (trigger_t_ns: when the rule's detector fired), then the rule's own.
    nlohmann::json detail{{"policy", "rules"}, {"rule", by.rule}, {"decision_t_ns", tick.sample.t_ns},
                          {"trigger_t_ns", by.detector_t_ns}, {"step", step.to_json()},
                          {"delayed_swapfile", to_string(ctx.spec.backend.delayed_swapfile)}};
    if (auto sw = ctx.backend.activate_swapfile()) detail["swapfile_step"] = sw->to_json();
    events.push_back({harness::kernel::monotonic_ns(), "backend_on", std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                      detail});
    Acted a;
    a.detail["errno"] = step.err;
    return a;
  }
};
}  // namespace

RuleActionInfo action_zram_on() {
  RuleActionInfo a;
  a.name = "zram_on";
  a.summary = "swap on the case's zram device (with zram_at_start: prepared), as delayed-activation does";
  a.make = [](const nlohmann::json&) { return std::make_unique<ZramOn>(); };
  return a;
}

}  // namespace harness::case_::rules
