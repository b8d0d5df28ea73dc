// bounded-loop: the practitioners' bounded memory.reclaim loop (koordinator-sh/koordinator
// PR 3189, "koordlet: reclaim BE memory via memory.reclaim on cgroup v2": a periodic loop
// writing a bounded batch, at most 32 MB, to memory.reclaim), started by the study's PSI
// trigger and stopped by PSI:
//   - from the tick the trigger fires, each window (one telemetry tick) whose bg PSI some
//     still rises asks for min(step_mib, what is left of total_cap_mib);
//   - "rises" is the study's counting-window rule, the trigger's own (trigger.hpp), so that the
//     loop keeps going on the same evidence that armed it: bg some total grew by >=
//     trigger.min_increase_us (1 ms) since the previous tick, in a window whose real length
//     (read_ns - previous read_ns) lies within [0.9, 1.1] x trigger.window_ms; an irregular
//     window does not count, as for the trigger (the firing window itself always counts);
//   - the first window that does not count ends the loop for the case (its reason says
//     which: PSI stopped rising, or an irregular window), as does reaching the cap (bytes
//     asked, not achieved: the cap bounds what the arm may request);
//   - a window whose previous write (or its settle) is still in flight writes nothing and
//     says so, but is judged all the same; a window whose PSI was not read is skipped,
//     without ending the loop.
// Its pace: one write in flight, kept busy by the write and its settled reading
// (ActionContext::reclaim_settle_ns, 2.2 s), so at the study's 1 s windows it writes at most
// every third window (more apart when a write itself takes over 0.8 s, as under TCG); the
// windows between are `skip` decisions. Every window from the trigger to the end of the loop
// is a `policy_decision` event; writes run on the writer thread (reclaim_writer.hpp), each a
// `reclaim_end` event and a reclaim_actions row. The cap's default is ours: the study's
// 96 MiB dose, so the loop never asks for more than the study's one write.
// Settings rules (settings_check): step_mib at most total_cap_mib (a larger step is never
// asked whole), and total_cap_mib at most the bg limit.
#include "harness/case/control/policy.hpp"

#include "harness/case/control/reclaim_writer.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/case/control/trigger.hpp"
#include "harness/kernel/size.hpp"

#include <algorithm>
#include <cmath>

namespace harness::case_ {

namespace {
class BoundedLoop final : public Policy {
 public:
  BoundedLoop(std::int64_t step_bytes, std::int64_t cap_bytes) : step_(step_bytes), cap_(cap_bytes) {}

  ZramAtStart zram_at_start() const override { return ZramAtStart::On; }

  void on_tick(const TickInput& tick, ActionContext& ctx, std::vector<ControllerEvent>& events) override {
    if (!writer_) writer_.emplace(ctx.bg, ctx.reclaim_settle_ns);
    record_writes(writer_->collect(), ctx.page_size_bytes, tag(), events, rows_);
    if (!tick.trigger_t_ns || stopped_) return;
    decide(tick, ctx, events);
  }

  void finish(ActionContext& ctx, CaseBundle& bundle, CaseOutcome&) override {
    if (writer_) record_writes(writer_->wait(), ctx.page_size_bytes, tag(), bundle.events, rows_);
    bundle.reclaims.insert(bundle.reclaims.end(), rows_.begin(), rows_.end());
  }

 private:
  static nlohmann::json tag() { return {{"policy", "bounded-loop"}}; }

  /// Why the window closing at `s` (after `prev`) ends the loop, or "" when it counts: the
  /// trigger's rule (trigger.hpp), its inputs into `d`.
  std::string not_counting(const TelemetrySample& prev, const TelemetrySample& s, std::int64_t delta, const ActionContext& ctx,
                           nlohmann::json& d) {
    if (!rule_) rule_.emplace(ctx.spec.trigger);
    const std::int64_t length = s.read_ns.value_or(s.t_ns) - prev.read_ns.value_or(prev.t_ns);
    const bool irregular = rule_->irregular_length(length);
    d.update({{"window_ns", length}, {"irregular", irregular}});
    if (irregular) return "irregular window: its length is outside [0.9, 1.1] x trigger.window_ms, so it does not count";
    if (delta < ctx.spec.trigger.min_increase_us) return "bg PSI some stopped rising";
    return "";
  }

  void decide(const TickInput& tick, ActionContext& ctx, std::vector<ControllerEvent>& events) {
    const TelemetrySample& s = tick.sample;
    const std::int64_t min_increase = ctx.spec.trigger.min_increase_us;
    nlohmann::json d{{"policy", "bounded-loop"},  {"trigger_t_ns", *tick.trigger_t_ns}, {"step_bytes", step_},
                     {"total_cap_bytes", cap_},   {"min_increase_us", min_increase},    {"requested_bytes", 0}};
    // The previous tick's sample (this tick's is the last of ctx.telemetry).
    const TelemetrySample* prev = ctx.telemetry.size() >= 2 ? &ctx.telemetry[ctx.telemetry.size() - 2] : nullptr;
    std::optional<std::int64_t> delta;
    if (prev && prev->bg_some_us && s.bg_some_us) delta = *s.bg_some_us - *prev->bg_some_us;
    const std::int64_t left = cap_ - asked_;
    std::string ends;
    if (delta && !tick.fired_now) ends = not_counting(*prev, s, *delta, ctx, d);
    if (!delta) {
      d["action"] = "skip";
      d["reason"] = "bg memory.pressure not read this window or the one before";
    } else if (!ends.empty()) {
      stopped_ = true;
      d["action"] = "stop";
      d["reason"] = ends;
    } else if (left <= 0) {
      stopped_ = true;
      d["action"] = "stop";
      d["reason"] = "total_cap_mib reached";
    } else if (writer_->busy()) {
      d["action"] = "skip";
      d["reason"] = "the previous write (or its settle) is still in flight";
    } else {
      const std::int64_t bytes = std::min(step_, left);
      writer_->start(bytes, pgsteal_rate_before(ctx.telemetry, 3));
      asked_ += bytes;
      d["action"] = "write";
      d["requested_bytes"] = bytes;
      d["write_seq"] = writer_->started();
    }
    d["asked_total_bytes"] = asked_;
    events.push_back({s.t_ns, "policy_decision", s.bg_some_us, delta, std::nullopt, std::nullopt, d});
  }

  std::int64_t step_, cap_;
  std::int64_t asked_ = 0;
  bool stopped_ = false;
  std::optional<TriggerPredicate> rule_;  ///< the trigger's window-length rule (irregular_length)
  std::optional<ReclaimWriter> writer_;
  std::vector<ReclaimRow> rows_;
};

}  // namespace

PolicyInfo policy_bounded_loop() {
  PolicyInfo p;
  p.name = "bounded-loop";
  p.summary = "from the PSI trigger on, bounded bg memory.reclaim writes while each window counts by the trigger's rule "
              "(bg PSI some grew >= 1 ms, window length within [0.9, 1.1] x 1 s), up to a total cap; the first window that "
              "does not count ends it; one write in flight (write + 2.2 s settle): at most every third window";
  p.source = "practitioners' bounded memory.reclaim loops: koordinator-sh/koordinator PR 3189 (batches of at most 32 MB); "
             "started and judged by the study's trigger and its window rule (ours)";
  p.params = {
      param_def("step_mib", ParamKind::Number, "MiB", 32, 1.0 / 1024 /* 1 KiB */, std::nullopt, "most asked in one window, MiB (koordinator PR 3189: <= 32 MB per batch)"),
      param_def("total_cap_mib", ParamKind::Number, "MiB", 96, 1.0 / 1024 /* 1 KiB */, std::nullopt, "most asked over the case, MiB (ours: the study's 96 MiB dose)"),
  };
  p.settings_check = [](const nlohmann::json& j, const ArmSettings& s) -> std::optional<ParamError> {
    const double step = j.at("step_mib").get<double>(), cap = j.at("total_cap_mib").get<double>();
    if (step > cap)
      return param_error("step_mib", readable_number(step) + " MiB must be at most total_cap_mib (" + readable_number(cap) +
                                         " MiB): no window could ask a whole step");
    return above_bg_limit("total_cap_mib", cap, s);
  };
  p.make = [](const nlohmann::json& j) {
    return std::make_unique<BoundedLoop>(std::llround(j.at("step_mib").get<double>() * harness::kernel::kMiB),
                                         std::llround(j.at("total_cap_mib").get<double>() * harness::kernel::kMiB));
  };
  return p;
}

}  // namespace harness::case_
