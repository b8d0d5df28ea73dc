// static-zram (study): zram swapped on before the case; no action when the trigger fires,
// whose would-be firing time is still recorded (the comparator's trigger time).
#include "harness/case/control/policy.hpp"

namespace harness::case_ {

namespace {
class StaticZram final : public Policy {
 public:
  ZramAtStart zram_at_start() const override { return ZramAtStart::On; }
  std::optional<std::string> no_action_note() const override {
    return "static-zram: no action; would-be firing time recorded";
  }
};
}  // namespace

PolicyInfo policy_static_zram() {
  PolicyInfo p;
  p.name = "static-zram";
  p.summary = "zram swapped on before the case; no action (the trigger's would-be firing time is recorded)";
  p.source = "study: the static-zram configuration";
  p.study_position = 1;
  p.make = [](const nlohmann::json&) { return std::make_unique<StaticZram>(); };
  return p;
}

}  // namespace harness::case_
