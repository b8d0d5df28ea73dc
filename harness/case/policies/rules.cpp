// rules: an arm composed without C++, as a list of rules over registered building blocks
// (harness/case/rules/: detectors and actions, one file each; syntax and one example per
// block: harness/case/rules/README.md):
//   {"when": DETECTOR, "do": ACTION, "mode": "once" | {"every_s": N} | {"cooldown_s": N}}
// with zram swapped on at the start or only prepared (`zram_at_start`: on | prepared).
//
// On every tick of the pressure and recovery phases: finished memory.reclaim writes are
// recorded, then each rule in list order: its detector judges the tick (always: detectors
// keep windows), and the rule acts when the detector holds and its mode allows:
//   - once: the first tick it holds (a skipped action, e.g. a write still in flight, is tried
//     again on the next tick it holds);
//   - every_s N: the detector is judged every N s from the rule's first tick (ticks at least N
//     s apart), and the rule acts on those ticks when it holds;
//   - cooldown_s N: any tick it holds, at least N s after the rule last acted.
// Each decision is a `rule` event at the tick (detail: rule index, detector and its inputs,
// action and what it did or why it skipped, bytes asked); the action adds its own events
// (reclaim_start / reclaim_end and reclaim_actions rows, backend_on, memory_high_set, ...).
//
// The study's trigger: a rule whose detector is `psi_window_trigger` without parameters (the
// case's own trigger) makes the arm act at the trigger: the controller records the firing as
// `trigger` (outcome_json.trigger.kind "trigger"), as for delayed-activation and
// bounded-reclaim; otherwise as `would_trigger`, as for static-zram. So the study's
// delayed-activation is {zram_at_start: prepared, rules: [{when: psi_window_trigger, do:
// zram_on, mode: once}]} and bounded-reclaim {rules: [{when: psi_window_trigger, do:
// {reclaim: {mib: 96}}, mode: once}]}: the same controller events, times, event details
// (trigger_t_ns: when the rule's detector fired, Observation::fired_t_ns) and outcome keys
// (tests/unit/case/rules_test.cpp), plus the `rule` events and the rule's own detail keys. outcome_json.reclaim is the
// arm's write when it made exactly one (null otherwise; every write is a reclaim_actions
// row); outcome_json.backend_on the first zram_on.
//
// The `rules` value is stored canonical (rules::canonical_rules: blocks as {NAME: {PARAMS}},
// defaults filled, modes written out), so two spellings of one list are one arm SHA-256.
// Settings rules (rules::rules_settings_problem): each block's own (reclaim: below the bg
// memory.max, as the study's dose), and every_s / cooldown_s at most the pressure phase.
#include "harness/case/control/policy.hpp"

#include "harness/case/rules/blocks.hpp"

namespace harness::case_ {

namespace {
using rules::Shared;

class Rules final : public Policy {
 public:
  Rules(const std::vector<rules::RuleSpec>& specs, ZramAtStart zram) : zram_(zram) {
    for (const auto& s : specs) {
      Rule r;
      r.spec = s;
      r.when = rules::find_detector(s.when)->make(s.when_params);
      r.act = rules::find_rule_action(s.act)->make(s.do_params);
      acts_at_trigger_ = acts_at_trigger_ || r.when->is_case_trigger();
      rules_.push_back(std::move(r));
    }
  }

  ZramAtStart zram_at_start() const override { return zram_; }

  std::optional<std::string> no_action_note() const override {
    if (acts_at_trigger_) return std::nullopt;
    return "rules: no rule acts at the case's trigger (psi_window_trigger without parameters); would-be firing time recorded";
  }

  void on_tick(const TickInput& tick, ActionContext& ctx, std::vector<ControllerEvent>& events) override {
    shared_.collect_writes(ctx, events);
    for (auto& r : rules_) r.act->on_tick(ctx, shared_, events);
    for (std::size_t i = 0; i < rules_.size(); ++i) judge(static_cast<int>(i), tick, ctx, events);
  }

  void finish(ActionContext& ctx, CaseBundle& bundle, CaseOutcome& outcome) override {
    shared_.collect_writes(ctx, bundle.events, /*wait=*/true);
    for (auto& r : rules_) r.act->finish(ctx, shared_, bundle, outcome);
    for (auto it = shared_.at_end.rbegin(); it != shared_.at_end.rend(); ++it) (*it)(bundle);
    bundle.reclaims.insert(bundle.reclaims.end(), shared_.rows.begin(), shared_.rows.end());
    if (shared_.records.size() == 1) outcome.reclaim = ReclaimOutcome{shared_.records.front(), ctx.page_size_bytes};
    if (shared_.backend_on) outcome.backend_on = shared_.backend_on;
  }

 private:
  struct Rule {
    rules::RuleSpec spec;
    std::unique_ptr<rules::Detector> when;
    std::unique_ptr<rules::RuleAction> act;
    bool acted = false;
    std::optional<std::int64_t> anchor_ns, last_act_ns;
  };

  void judge(int i, const TickInput& tick, ActionContext& ctx, std::vector<ControllerEvent>& events) {
    Rule& r = rules_[static_cast<std::size_t>(i)];
    const rules::Observation o = r.when->observe(tick, ctx);
    const std::int64_t t = tick.sample.t_ns;
    const rules::Mode& m = r.spec.mode;
    if (m.kind == rules::Mode::Once && r.acted) return;
    if (m.kind == rules::Mode::Every) {
      if (!r.anchor_ns) {
        r.anchor_ns = t;
        return;
      }
      if (t - *r.anchor_ns < m.period_ns) return;
      r.anchor_ns = t;
    }
    if (!o.holds) return;
    if (m.kind == rules::Mode::Cooldown && r.last_act_ns && t - *r.last_act_ns < m.period_ns) return;
    const std::size_t at = events.size();
    const rules::Acted a = r.act->act({i, o.fired_t_ns.value_or(t)}, tick, ctx, shared_, events);
    nlohmann::json d{{"policy", "rules"},     {"rule", i},         {"when", r.spec.when}, {"inputs", o.inputs},
                     {"do", r.spec.act},      {"mode", m.to_json()}, {"decision", a.action},
                     {"requested_bytes", a.requested_bytes}, {"output", a.detail}};
    if (!a.reason.empty()) d["reason"] = a.reason;
    if (a.action == "act") {
      r.acted = true;
      r.last_act_ns = t;
    }
    // The decision first, then the events its action appended.
    events.insert(events.begin() + static_cast<std::ptrdiff_t>(at),
                  ControllerEvent{t, "rule", tick.sample.bg_some_us, std::nullopt, std::nullopt, std::nullopt, d});
  }

  ZramAtStart zram_;
  bool acts_at_trigger_ = false;
  std::vector<Rule> rules_;
  Shared shared_;
};
}  // namespace

PolicyInfo policy_rules() {
  PolicyInfo p;
  p.name = "rules";
  p.summary = "an arm composed of registered detectors and actions: a list of {when, do, mode} rules (harness/case/rules/README.md)";
  p.source = "ours (arms composed without C++); the blocks cite their own sources";
  ParamDef r;
  r.name = "rules";
  r.kind = ParamKind::Json;
  r.default_value = nlohmann::json::array();  // no rule: zram as zram_at_start says, no action
  r.doc = "list of rules ([]: none, no action) {\"when\": {DETECTOR: {...}}, \"do\": {ACTION: {...}}, \"mode\": \"once\" | {\"every_s\": N} | "
          "{\"cooldown_s\": N}}; detectors: " + rules::detector_names() + "; actions: " + rules::rule_action_names();
  r.check = [](const nlohmann::json& v) { return rules::check_rules(v); };
  r.canonical = [](const nlohmann::json& v) { return rules::canonical_rules(v); };
  ParamDef z;
  z.name = "zram_at_start";
  z.kind = ParamKind::Text;
  z.default_value = "on";
  z.doc = "on (swapped on before the case, as static-zram) | prepared (left off until a zram_on action, as delayed-activation)";
  z.check = [](const nlohmann::json& v) -> Checked {
    if (v == "on" || v == "prepared") return {};
    return problem("must be \"on\" or \"prepared\", not " + v.dump());
  };
  p.params = {r, z};
  p.settings_check = [](const nlohmann::json& j, const ArmSettings& s) { return rules::rules_settings_problem(j.at("rules"), s); };
  p.make = [](const nlohmann::json& j) {
    return std::make_unique<Rules>(rules::parse_rules(j.at("rules")),
                                   j.at("zram_at_start") == "prepared" ? ZramAtStart::Prepared : ZramAtStart::On);
  };
  return p;
}

}  // namespace harness::case_
