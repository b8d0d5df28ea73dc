// delayed-activation (study): zram prepared (algorithm, disksize, swap header) but left
// off; when the trigger fires it is swapped on, once. The swapfile before the trigger is
// the campaign's choice (backend.delayed_swapfile, spec.hpp): active from the start (the
// default), or off and swapped on at the trigger right after zram. The swapon step, errno included, is
// the `backend_on` event and outcome_json.backend_on: a failed swapon is an outcome, the
// case goes on.
#include "harness/case/control/policy.hpp"
#include "harness/case/spec/spec.hpp"

#include "harness/kernel/fs.hpp"

namespace harness::case_ {

namespace {
class DelayedActivation final : public Policy {
 public:
  ZramAtStart zram_at_start() const override { return ZramAtStart::Prepared; }

  void on_trigger(std::int64_t t_ns, ActionContext& ctx, std::vector<ControllerEvent>& events) override {
    const StepRecord step = ctx.backend.activate();
    backend_on_ = step;
    nlohmann::json detail{{"trigger_t_ns", t_ns}, {"step", step.to_json()},
                          {"delayed_swapfile", to_string(ctx.spec.backend.delayed_swapfile)}};
    // backend.delayed_swapfile off: the swapfile joins zram now (the spill device of every
    // configuration, from the trigger on).
    if (auto sw = ctx.backend.activate_swapfile()) detail["swapfile_step"] = sw->to_json();
    events.push_back({harness::kernel::monotonic_ns(), "backend_on", std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                      detail});
  }

  void finish(ActionContext&, CaseBundle&, CaseOutcome& outcome) override {
    if (backend_on_) outcome.backend_on = backend_on_;
  }

 private:
  std::optional<StepRecord> backend_on_;
};
}  // namespace

PolicyInfo policy_delayed_activation() {
  PolicyInfo p;
  p.name = "delayed-activation";
  p.summary = "zram prepared but off; swapped on once when the PSI trigger fires";
  p.source = "study: the delayed-activation configuration (the swapfile before the trigger: backend.delayed_swapfile)";
  p.study_position = 2;
  p.make = [](const nlohmann::json&) { return std::make_unique<DelayedActivation>(); };
  return p;
}

}  // namespace harness::case_
