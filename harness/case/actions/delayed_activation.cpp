// delayed-activation (study): zram prepared (algorithm, disksize, swap header) but left
// off; when the trigger fires it is swapped on, once. The swapon step, errno included, is
// the `backend_on` event and outcome_json.backend_on: a failed swapon is an outcome, the
// case goes on.
#include "harness/case/actions/action.hpp"

#include "harness/kernel/fs.hpp"

namespace hcase {

namespace {
class DelayedActivation final : public ConfigurationAction {
 public:
  ZramAtStart zram_at_start() const override { return ZramAtStart::Prepared; }

  void on_trigger(std::int64_t t_ns, ActionContext& ctx, std::vector<ControllerEvent>& events) override {
    const StepRecord step = ctx.backend.activate();
    backend_on_ = step;
    events.push_back({kernel::monotonic_ns(), "backend_on", std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                      nlohmann::json{{"trigger_t_ns", t_ns}, {"step", step.to_json()}}});
  }

  void finish(ActionContext&, CaseBundle&, CaseOutcome& outcome) override {
    if (backend_on_) outcome.backend_on = backend_on_;
  }

 private:
  std::optional<StepRecord> backend_on_;
};
}  // namespace

std::unique_ptr<ConfigurationAction> delayed_activation_action() { return std::make_unique<DelayedActivation>(); }

}  // namespace hcase
