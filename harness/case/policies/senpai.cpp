// senpai: TMO's Senpai controller (Weiner et al., "TMO: Transparent Memory
// Offloading in Datacenters", ASPLOS 2022), with the paper's linear law. Every `interval_s`
// (6 s) it asks bg memory.reclaim for
//     memory.current x ratio x max(0, 1 - pressure / target)
// bytes, never more than `max_step` of memory.current per interval (defaults: ratio 0.0005,
// target 0.1 %, max_step 1 %, as the paper gives them), where
//     pressure = max(memory PSI some, I/O PSI some) of bg over the interval,
// each the share of the interval bg spent stalled (`some`), from the samples' bg_some_us and
// bg_io_some_us totals over the read times (read_ns) of the interval's first and last samples.
// At or above the target, no reclaim at all: the workload gets room.
// I/O (`io_pressure`, default on): TMO says Senpai watches I/O pressure too, because
// offloading's harm can arrive through a busier device rather than as memory stalls; taking
// the larger of the two is ours, as oomd's senpai plugin combines them (it acts only while
// memory and I/O pressure are both below its target). An interval whose I/O total was not
// read asks nothing and says so (unknown pressure is not pressure below the target).
// Not oomd's plugin: that one drives memory.high (or memory.high.tmp) towards a floor of the
// unreclaimable memory plus a minimum, with probe and backoff coefficients over its pressure
// target (its immediate-backoff mode reads the kernel's 10 s and 60 s PSI averages); this
// policy writes memory.reclaim by the paper's formula over the interval's own totals.
//
// It runs on every tick of the pressure and recovery phases from the first one, not on the
// study's trigger (whose would-be firing is recorded, as for static-zram). Each interval's
// decision is a `policy_decision` event (its inputs, the formula, the cap, the bytes asked);
// the writes run on the writer thread (reclaim_writer.hpp), one at a time: an interval that
// ends while the previous write (or its settle) is in flight asks nothing and says so.
// Each finished write is a `reclaim_end` event and a reclaim_actions row.
// Settings rules (settings_check): interval_s shorter than the pressure phase (else its
// first decision falls in recovery) and at least one telemetry tick (it decides on ticks).
#include "harness/case/control/policy.hpp"

#include "harness/case/control/reclaim_writer.hpp"

#include <algorithm>
#include <cmath>

namespace harness::case_ {

namespace {
constexpr std::int64_t kNsPerS = 1'000'000'000;

/// The share of `span_ns` stalled, % (us of stall x 1000 / ns of wall time).
double stalled_pct(std::int64_t delta_us, std::int64_t span_ns) {
  return 100.0 * static_cast<double>(delta_us) * 1000.0 / static_cast<double>(span_ns);
}

class Senpai final : public Policy {
 public:
  Senpai(double interval_s, double ratio, double target_pct, double max_step_pct, bool io)
      : interval_ns_(std::llround(interval_s * kNsPerS)), ratio_(ratio), target_pct_(target_pct), max_step_pct_(max_step_pct),
        io_(io) {}

  ZramAtStart zram_at_start() const override { return ZramAtStart::On; }
  std::optional<std::string> no_action_note() const override {
    return "senpai: acts every interval, not at the trigger; would-be firing time recorded";
  }

  void on_tick(const TickInput& tick, ActionContext& ctx, std::vector<ControllerEvent>& events) override {
    if (!writer_) writer_.emplace(ctx.bg, ctx.reclaim_settle_ns);
    record_writes(writer_->collect(), ctx.page_size_bytes, tag(), events, rows_);
    const TelemetrySample& s = tick.sample;
    if (!anchor_) {  // the interval starts at the first readable tick
      if (s.bg_some_us) anchor_ = Anchor{s.t_ns, read_ns(s), *s.bg_some_us, s.bg_io_some_us};
      return;
    }
    if (s.t_ns - anchor_->t_ns < interval_ns_) return;
    decide(s, ctx, events);
  }

  void finish(ActionContext& ctx, CaseBundle& bundle, CaseOutcome&) override {
    if (writer_) record_writes(writer_->wait(), ctx.page_size_bytes, tag(), bundle.events, rows_);
    bundle.reclaims.insert(bundle.reclaims.end(), rows_.begin(), rows_.end());
  }

 private:
  struct Anchor {
    std::int64_t t_ns, read_ns, some_us;
    std::optional<std::int64_t> io_some_us;
  };
  static std::int64_t read_ns(const TelemetrySample& s) { return s.read_ns.value_or(s.t_ns); }
  static nlohmann::json tag() { return {{"policy", "senpai"}}; }

  /// Why the interval ending at `s` cannot be judged, or "" when it can.
  std::string missing_input(const TelemetrySample& s) const {
    if (!s.bg_some_us || !s.bg_current_bytes) return "inputs missing: bg memory.pressure or memory.current not read this tick";
    if (io_ && (!s.bg_io_some_us || !anchor_->io_some_us))
      return "inputs missing: bg io.pressure not read at the interval's start or end (io_pressure is on)";
    return "";
  }

  /// The law over the interval ending at `s` (its inputs already in `d`): the bytes to ask.
  std::int64_t law(const TelemetrySample& s, std::int64_t span_ns, nlohmann::json& d) const {
    const double current = static_cast<double>(*s.bg_current_bytes);
    const double mem_pct = span_ns > 0 ? stalled_pct(*s.bg_some_us - anchor_->some_us, span_ns) : 0.0;
    double pressure = mem_pct;
    if (io_) {
      const std::int64_t io_delta = *s.bg_io_some_us - *anchor_->io_some_us;
      const double io_pct = span_ns > 0 ? stalled_pct(io_delta, span_ns) : 0.0;
      d.update({{"io_some_delta_us", io_delta}, {"io_some_pct", io_pct}});
      pressure = std::max(mem_pct, io_pct);
    }
    const double formula = current * ratio_ * std::max(0.0, 1.0 - pressure / target_pct_);
    const double cap = current * max_step_pct_ / 100.0;
    const auto bytes = static_cast<std::int64_t>(std::floor(std::min(formula, cap)));
    d.update({{"psi_some_pct", mem_pct}, {"pressure_pct", pressure}, {"formula_bytes", formula}, {"cap_bytes", cap},
              {"bytes", bytes}});
    return bytes;
  }

  void decide(const TelemetrySample& s, ActionContext& ctx, std::vector<ControllerEvent>& events) {
    nlohmann::json d{{"policy", "senpai"},           {"interval_start_t_ns", anchor_->t_ns},
                     {"ratio", ratio_},               {"target_pct", target_pct_},
                     {"max_step_pct", max_step_pct_}, {"io_pressure", io_},
                     {"requested_bytes", 0}};
    std::optional<std::int64_t> delta;
    if (const std::string why = missing_input(s); !why.empty()) {
      d["action"] = "skip";
      d["reason"] = why;
    } else {
      delta = *s.bg_some_us - anchor_->some_us;
      const std::int64_t span_ns = read_ns(s) - anchor_->read_ns;
      d.update({{"memory_current_bytes", *s.bg_current_bytes}, {"psi_some_delta_us", *delta}, {"span_ns", span_ns}});
      const std::int64_t bytes = law(s, span_ns, d);
      if (span_ns <= 0) {
        d["action"] = "skip";
        d["reason"] = "interval has no length (read times not increasing)";
      } else if (writer_->busy()) {
        d["action"] = "skip";
        d["reason"] = "the previous write (or its settle) is still in flight";
      } else if (bytes <= 0) {
        d["action"] = "none";
        d["reason"] = d["pressure_pct"].get<double>() >= target_pct_ ? "PSI some at or above target" : "formula below one byte";
      } else {
        writer_->start(bytes, pgsteal_rate_before(ctx.telemetry, 3));
        d["action"] = "write";
        d["requested_bytes"] = bytes;
        d["write_seq"] = writer_->started();
      }
    }
    events.push_back({s.t_ns, "policy_decision", s.bg_some_us, delta, std::nullopt, std::nullopt, d});
    // The next interval starts here (or at the next readable tick).
    if (s.bg_some_us) anchor_ = Anchor{s.t_ns, read_ns(s), *s.bg_some_us, s.bg_io_some_us};
    else anchor_.reset();
  }

  std::int64_t interval_ns_;
  double ratio_, target_pct_, max_step_pct_;
  bool io_;
  std::optional<Anchor> anchor_;
  std::optional<ReclaimWriter> writer_;
  std::vector<ReclaimRow> rows_;
};

}  // namespace

PolicyInfo policy_senpai() {
  PolicyInfo p;
  p.name = "senpai";
  p.summary = "every interval, bg memory.reclaim of memory.current x ratio x max(0, 1 - pressure / target), capped per "
              "interval; pressure = the larger of bg memory and I/O PSI some over the interval";
  p.source = "TMO's Senpai (Weiner et al., ASPLOS 2022), the paper's linear law: reclaim = current x 0.0005 x "
             "max(0, 1 - PSI_some / 0.1%) every 6 s, at most 1% per period, and Senpai watches I/O pressure too (the "
             "larger of the two: ours, as oomd's senpai plugin combines them). Not oomd's plugin, which drives "
             "memory.high toward a floor with probe/backoff coefficients on its pressure target (its immediate-backoff "
             "mode reads the kernel's 10 s and 60 s PSI averages)";
  p.params = {
      param_def("interval_s", ParamKind::Number, "s", 6, 1, 600, "time between two decisions, s (TMO: 6)"),
      param_def("ratio", ParamKind::Number, "ratio", 0.0005, 0, 1, "share of memory.current asked per interval at zero pressure (TMO: 0.0005)"),
      param_def("target", ParamKind::Number, "%", 0.1, 0.001, 100,
             "pressure (PSI some) over the interval, % of its wall time, at which reclaim stops (TMO: 0.1)"),
      param_def("max_step", ParamKind::Number, "%", 1, 0, 100, "most of memory.current asked in one interval, % (TMO: 1)"),
      param_def("io_pressure", ParamKind::Boolean, "", true, std::nullopt, std::nullopt,
                "judge the larger of bg memory and I/O PSI some against the target (TMO: Senpai watches I/O pressure "
                "too); false = memory PSI alone"),
  };
  p.settings_check = [](const nlohmann::json& j, const ArmSettings& s) -> std::optional<ParamError> {
    const double interval = j.at("interval_s").get<double>();
    const std::string shown = readable_number(interval) + " s";
    if (auto e = outlasts_pressure("interval_s", shown, interval, s, /*or_equal=*/true)) return e;
    return under_one_tick("interval_s", shown, interval, s);
  };
  p.make = [](const nlohmann::json& params) {
    return std::make_unique<Senpai>(params.at("interval_s").get<double>(), params.at("ratio").get<double>(),
                                    params.at("target").get<double>(), params.at("max_step").get<double>(),
                                    params.at("io_pressure").get<bool>());
  };
  return p;
}

}  // namespace harness::case_
