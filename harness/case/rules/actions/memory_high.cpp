// Action `memory_high`: set bg memory.high to `fraction` x bg memory.current (the tick's
// sample; read from memory.current when the sample lacks it), throttling instead of
// reclaim. The write reclaims down to the new limit in the writing task (6.1
// memory_high_write), so it runs on its own thread (memory_high_writer.hpp, shared with the
// memory-high policy); the tick that returns it records
// `memory_high_set` (errno, duration). The value before the first set is read once and
// written back after the schedule (`memory_high_restore`), once per arm whichever rules set
// it. Skips while its previous write is in flight, or when memory.current cannot be read.
#include "harness/case/rules/blocks.hpp"

#include "harness/case/control/memory_high_writer.hpp"
#include "harness/kernel/errors.hpp"

#include <cmath>

namespace harness::case_::rules {

namespace {
class MemoryHigh final : public RuleAction {
 public:
  explicit MemoryHigh(const nlohmann::json& p) : fraction_(p.at("fraction").get<double>()) {}

  Acted act(const Firing& by, const TickInput& tick, ActionContext& ctx, Shared& shared, std::vector<ControllerEvent>&) override {
    Acted a;
    a.detail["fraction"] = fraction_;
    if (writer_.busy()) return skip(a, "the previous memory.high write is still in flight");
    std::optional<std::int64_t> current = tick.sample.bg_current_bytes;
    a.detail["current_from"] = "sample";
    if (!current) {
      a.detail["current_from"] = "memory.current";
      try {
        current = static_cast<std::int64_t>(ctx.bg.memory_current_bytes());
      } catch (const harness::kernel::Error& e) {
        a.detail["current_error"] = e.what();
      }
    }
    a.detail["memory_current_bytes"] = current ? nlohmann::json(*current) : nlohmann::json();
    if (!current) return skip(a, "bg memory.current not read");
    if (!original_read_) remember_original(ctx, shared, a.detail);
    const auto high = static_cast<std::uint64_t>(std::floor(fraction_ * static_cast<double>(*current)));
    a.detail["memory_high_bytes"] = high;
    rule_ = by.rule;
    writer_.start(ctx.bg, high);
    return a;
  }

  void on_tick(ActionContext&, Shared&, std::vector<ControllerEvent>& events) override {
    if (auto e = writer_.collect(tag())) events.push_back(*e);
  }

  void finish(ActionContext&, Shared&, CaseBundle& bundle, CaseOutcome&) override {
    if (auto e = writer_.wait(tag())) bundle.events.push_back(*e);
  }

 private:
  static Acted skip(Acted a, std::string why) {
    a.action = "skip";
    a.reason = std::move(why);
    return a;
  }

  nlohmann::json tag() const { return {{"policy", "rules"}, {"rule", rule_}}; }

  /// The first memory_high of the arm reads the value to restore and registers the restore.
  void remember_original(ActionContext& ctx, Shared& shared, nlohmann::json& detail) {
    original_read_ = true;
    if (shared.memory_high_original) return;  // another rule read it before its own set
    try {
      shared.memory_high_original = ctx.bg.memory_high();
    } catch (const harness::kernel::Error& e) {
      detail["old_error"] = e.what();  // nothing to restore to: left to restoration
      return;
    }
    detail["old_memory_high"] = memory_limit_json(*shared.memory_high_original);
    const harness::kernel::Cgroup bg = ctx.bg;
    const harness::kernel::MemoryLimit old = *shared.memory_high_original;
    shared.at_end.push_back([bg, old](CaseBundle& bundle) {
      bundle.events.push_back(restore_memory_high(bg, old, {{"policy", "rules"}}));
    });
  }

  double fraction_;
  bool original_read_ = false;
  int rule_ = 0;
  MemoryHighWriter writer_;
};
}  // namespace

RuleActionInfo action_memory_high() {
  RuleActionInfo a;
  a.name = "memory_high";
  a.summary = "set bg memory.high to a fraction of bg memory.current (throttling; restored after the schedule)";
  a.params = {param_def("fraction", ParamKind::Number, "ratio", nullptr, 0.01, 1,
                          "new memory.high as a share of bg memory.current at the tick")};
  a.check = [](const nlohmann::json& p) { return p.contains("fraction") ? Checked() : problem("needs fraction"); };
  a.make = [](const nlohmann::json& p) { return std::make_unique<MemoryHigh>(p); };
  return a;
}

}  // namespace harness::case_::rules
