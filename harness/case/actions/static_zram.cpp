// static-zram (study): zram swapped on before the case; no action when the trigger fires,
// whose would-be firing time is still recorded (the comparator's trigger time).
#include "harness/case/actions/action.hpp"

namespace harness::case_ {

namespace {
class StaticZram final : public ConfigurationAction {
 public:
  ZramAtStart zram_at_start() const override { return ZramAtStart::On; }
  std::optional<std::string> no_action_note() const override {
    return "static-zram: no action; would-be firing time recorded";
  }
};
}  // namespace

std::unique_ptr<ConfigurationAction> static_zram_action() { return std::make_unique<StaticZram>(); }

}  // namespace harness::case_
