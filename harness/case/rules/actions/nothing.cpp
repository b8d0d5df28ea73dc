// Action `nothing`: records the rule's decision (its `rule` event, with the detector's
// inputs) and does nothing else: a detector measured without acting.
#include "harness/case/rules/blocks.hpp"

namespace harness::case_::rules {

namespace {
class Nothing final : public RuleAction {
 public:
  Acted act(const Firing&, const TickInput&, ActionContext&, Shared&, std::vector<ControllerEvent>&) override { return {}; }
};
}  // namespace

RuleActionInfo action_nothing() {
  RuleActionInfo a;
  a.name = "nothing";
  a.summary = "no action: the decision is recorded (a `rule` event) and nothing else happens";
  a.make = [](const nlohmann::json&) { return std::make_unique<Nothing>(); };
  return a;
}

}  // namespace harness::case_::rules
