// memflux-guard: memflux's proactive reclaim under its pressure gate and safety model
// (memflux, github.com/Twyx22/memflux, README "Safety model" and "memfluxd"). Every cycle
// (`interval_ms`, memflux's one-second cycle) is judged; a cycle writes one fixed `step_mib`
// to bg memory.reclaim only while pressure persists and no guard holds:
//   - PSI gate: bg PSI some over the last `gate_window_s` (10 s) at least `psi_some_min` %
//     (30 %). memflux acts only under pressure ("under normal availability, only observation
//     runs"; its memory.reclaim step "when pressure persists"): its engine gates on memory PSI
//     some avg10 >= psi_threshold (0.20 in its shipped memflux.conf) and writes memory.reclaim
//     only when avg10 is still >= 1.5 x that, 30 %. The kernel's avg10 is a moving average;
//     here the share of the last gate_window_s stalled, from the samples' totals (ours). A
//     cycle with the gate closed only observes (`observe`); one whose window reaches back
//     before the first sample is not judged and observes too;
//   - crisis guard: PSI full > `psi_full_max` % over the last cycle, or MemAvailable <
//     `mem_available_min` % of MemTotal (memflux: 25 % and 5 %, fixed there);
//   - thrash guard: refaults over the last cycle > `thrash_refaults` pages suspend this
//     cycle and the next `thrash_cooldown_cycles` (memflux: > 20 K pages/cycle, 20 cycles);
//   - anti-thrash cooldown: `cooldown_cycles` cycles between two writes (memflux: 5).
// Where this differs from memflux, and why:
//   - memflux pages out chosen processes (process_madvise) and reads /proc/pressure/memory;
//     here the arm reclaims the case's bg cgroup, so PSI some, PSI full and refaults are bg's
//     (the samples' bg_some_us, bg_full_us and bg workingset_refault_anon + _file: the cgroup
//     the write acts on), and the thrash guard watches the cgroup, not one process, after any
//     cycle. In bg, whose one pressure-gen thread is most of its tasks, PSI some and full are
//     close, so the gate (some >= 30 %) and the crisis guard (full > 25 %) leave a narrow band:
//     cycles whose last second stalled less while the window's average stays high;
//   - MemAvailable is system-wide, as in memflux: /proc/meminfo read through the kernel
//     layer (its Fs root is the case's, ActionContext::bg.fs()) on decision ticks only;
//   - unknown headroom is no headroom: a PSI full or MemAvailable that cannot be read
//     suspends the cycle (memflux acts only when there is headroom); unknown refaults leave
//     the thrash guard unjudged (null in the event); an unread PSI some closes the gate;
//   - MGLRU min_ttl_ms is not set (memflux sets 2000 ms, so that the kernel keeps working-set
//     pages younger than 2 s): MGLRU is off in the Debian 6.1 cloud kernel the guests run, and
//     the harness never changes a kernel knob outside an A/B variant;
//   - the step is ours (memflux caps pageout per process per cycle, 512 MB by default; a
//     fixed cgroup step has no memflux value): 32 MiB, the practitioners' batch (koordinator
//     PR 3189).
// It runs from the first tick of the pressure phase, not on the study's trigger (whose
// would-be firing is recorded). Every cycle is a `policy_decision` event with the gate's and
// the guards' inputs and verdicts; writes run on the writer thread (reclaim_writer.hpp), one
// at a time.
// Settings rules (settings_check): interval_ms shorter than the pressure phase and at least
// one telemetry tick (cycles are judged on ticks); gate_window_s at least one tick and shorter
// than the pressure phase; step_mib at most the bg limit.
#include "harness/case/control/policy.hpp"

#include "harness/case/control/reclaim_writer.hpp"
#include "harness/kernel/errors.hpp"
#include "harness/kernel/procfs.hpp"
#include "harness/kernel/size.hpp"

#include <cmath>

namespace harness::case_ {

namespace {
struct Params {
  std::int64_t interval_ns = 0, step_bytes = 0, gate_window_ns = 0;
  double psi_some_min = 0, psi_full_max = 0, mem_available_min = 0;
  std::int64_t thrash_refaults = 0, thrash_cooldown_cycles = 0, cooldown_cycles = 0;
};

std::int64_t read_ns(const TelemetrySample& s) { return s.read_ns.value_or(s.t_ns); }

/// The share of [a, z] bg was stalled on `total` (some or full), %, or nullopt when unread.
std::optional<double> stalled_pct(const std::optional<std::int64_t>& a, const std::optional<std::int64_t>& z,
                                  std::int64_t span_ns) {
  if (!a || !z || span_ns <= 0) return std::nullopt;
  return 100.0 * static_cast<double>(*z - *a) * 1000.0 / static_cast<double>(span_ns);
}

nlohmann::json or_null(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

class MemfluxGuard final : public Policy {
 public:
  explicit MemfluxGuard(Params p) : p_(p) {}

  ZramAtStart zram_at_start() const override { return ZramAtStart::On; }
  std::optional<std::string> no_action_note() const override {
    return "memflux-guard: acts every cycle, not at the trigger; would-be firing time recorded";
  }

  void on_tick(const TickInput& tick, ActionContext& ctx, std::vector<ControllerEvent>& events) override {
    if (!writer_) writer_.emplace(ctx.bg, ctx.reclaim_settle_ns);
    record_writes(writer_->collect(), ctx.page_size_bytes, tag(), events, rows_);
    const TelemetrySample& s = tick.sample;
    if (!anchor_) {
      anchor_ = s;
      return;
    }
    if (s.t_ns - anchor_->t_ns < p_.interval_ns) return;
    decide(s, ctx, events);
    anchor_ = s;
  }

  void finish(ActionContext& ctx, CaseBundle& bundle, CaseOutcome&) override {
    if (writer_) record_writes(writer_->wait(), ctx.page_size_bytes, tag(), bundle.events, rows_);
    bundle.reclaims.insert(bundle.reclaims.end(), rows_.begin(), rows_.end());
  }

 private:
  static nlohmann::json tag() { return {{"policy", "memflux-guard"}}; }
  static std::optional<std::int64_t> refaults(const TelemetrySample& s) {
    if (!s.bg_workingset_refault_anon && !s.bg_workingset_refault_file) return std::nullopt;
    return s.bg_workingset_refault_anon.value_or(0) + s.bg_workingset_refault_file.value_or(0);
  }

  /// MemAvailable as % of MemTotal (system-wide), or nullopt when unreadable.
  static std::optional<double> mem_available_pct(const ActionContext& ctx, nlohmann::json& d) {
    try {
      const auto m = harness::kernel::read_meminfo(ctx.bg.fs());
      const auto avail = m.get("MemAvailable"), total = m.get("MemTotal");
      if (!avail || !total || *total == 0) return std::nullopt;
      d["mem_available_kib"] = *avail;
      d["mem_total_kib"] = *total;
      return 100.0 * static_cast<double>(*avail) / static_cast<double>(*total);
    } catch (const harness::kernel::Error& e) {
      d["meminfo_error"] = e.what();
      return std::nullopt;
    }
  }

  /// The crisis guard over the cycle [a, s]: its inputs into `d`, its verdicts into `why`.
  void crisis_guard(const TelemetrySample& a, const TelemetrySample& s, const ActionContext& ctx, nlohmann::json& d,
                    std::vector<std::string>& why) const {
    const std::optional<double> full_pct = stalled_pct(a.bg_full_us, s.bg_full_us, read_ns(s) - read_ns(a));
    if (full_pct) d["psi_full_delta_us"] = *s.bg_full_us - *a.bg_full_us;
    d["psi_full_pct"] = or_null(full_pct);
    const auto avail_pct = mem_available_pct(ctx, d);
    d["mem_available_pct"] = or_null(avail_pct);
    if (!full_pct) why.push_back("crisis guard: PSI full over the cycle not measured");
    else if (*full_pct > p_.psi_full_max) why.push_back("crisis guard: PSI full above psi_full_max");
    if (!avail_pct) why.push_back("crisis guard: MemAvailable not read");
    else if (*avail_pct < p_.mem_available_min) why.push_back("crisis guard: MemAvailable below mem_available_min");
  }

  /// The thrash guard over the cycle [a, s]: a detection suspends this cycle and resets the
  /// count of cycles to come.
  void thrash_guard(const TelemetrySample& a, const TelemetrySample& s, nlohmann::json& d, std::vector<std::string>& why) {
    const auto r0 = refaults(a), r1 = refaults(s);
    const std::optional<std::int64_t> cycle_refaults = r0 && r1 ? std::optional(*r1 - *r0) : std::nullopt;
    d["refaults"] = cycle_refaults ? nlohmann::json(*cycle_refaults) : nlohmann::json();
    if (cycle_refaults && *cycle_refaults > p_.thrash_refaults) {
      why.push_back("thrash guard: refaults above thrash_refaults");
      thrash_left_ = p_.thrash_cooldown_cycles;
    } else if (thrash_left_ > 0) {
      why.push_back("thrash guard: cooling down");
      --thrash_left_;
    }
    d["thrash_cycles_left"] = thrash_left_;
  }

  /// The PSI gate at `s`: bg PSI some over the last gate_window_s (from the latest sample at
  /// least that long before `s`), its inputs into `d`; open when at least psi_some_min.
  bool gate_open(const TelemetrySample& s, const ActionContext& ctx, nlohmann::json& d) const {
    const TelemetrySample* from = nullptr;
    for (auto it = ctx.telemetry.rbegin(); it != ctx.telemetry.rend(); ++it)
      if (it->t_ns <= s.t_ns - p_.gate_window_ns) {
        from = &*it;
        break;
      }
    std::optional<double> some_pct;
    if (from) {
      d["gate_start_t_ns"] = from->t_ns;
      some_pct = stalled_pct(from->bg_some_us, s.bg_some_us, read_ns(s) - read_ns(*from));
      if (some_pct) d["gate_some_delta_us"] = *s.bg_some_us - *from->bg_some_us;
    }
    d["gate_some_pct"] = or_null(some_pct);
    return some_pct && *some_pct >= p_.psi_some_min;
  }

  void decide(const TelemetrySample& s, ActionContext& ctx, std::vector<ControllerEvent>& events) {
    ++cycle_;
    const TelemetrySample& a = *anchor_;
    nlohmann::json d{{"policy", "memflux-guard"}, {"cycle", cycle_}, {"cycle_start_t_ns", a.t_ns},
                     {"step_bytes", p_.step_bytes}, {"requested_bytes", 0}, {"span_ns", read_ns(s) - read_ns(a)}};
    std::vector<std::string> why;
    crisis_guard(a, s, ctx, d, why);
    thrash_guard(a, s, d, why);
    const bool gate = gate_open(s, ctx, d);
    d["gate_open"] = gate;
    if (!why.empty()) {
      d["action"] = "suspend";
    } else if (!gate) {
      d["action"] = "observe";
      why.push_back(d["gate_some_pct"].is_null() ? "PSI gate: bg PSI some over gate_window_s not measured"
                                                  : "PSI gate: bg PSI some over gate_window_s below psi_some_min");
    } else if (last_write_cycle_ && cycle_ - *last_write_cycle_ <= p_.cooldown_cycles) {
      d["action"] = "skip";
      why.push_back("anti-thrash cooldown since the last write");
    } else if (writer_->busy()) {
      d["action"] = "skip";
      why.push_back("the previous write (or its settle) is still in flight");
    } else {
      writer_->start(p_.step_bytes, pgsteal_rate_before(ctx.telemetry, 3));
      last_write_cycle_ = cycle_;
      d["action"] = "write";
      d["requested_bytes"] = p_.step_bytes;
      d["write_seq"] = writer_->started();
    }
    d["reasons"] = why;
    events.push_back({s.t_ns, "policy_decision", s.bg_full_us, std::nullopt, std::nullopt, std::nullopt, d});
  }

  Params p_;
  std::optional<TelemetrySample> anchor_;
  std::int64_t cycle_ = 0;
  std::optional<std::int64_t> last_write_cycle_;
  std::int64_t thrash_left_ = 0;
  std::optional<ReclaimWriter> writer_;
  std::vector<ReclaimRow> rows_;
};

}  // namespace

PolicyInfo policy_memflux_guard() {
  PolicyInfo p;
  p.name = "memflux-guard";
  p.summary = "a fixed bg memory.reclaim step in a cycle only while bg PSI some persists above memflux's gate, suspended by "
              "its crisis and thrash guards";
  p.source = "memflux (github.com/Twyx22/memflux): PSI gate (memory.reclaim only while PSI some avg10 >= 1.5 x its 0.20 "
             "threshold: 30%), crisis guard (PSI full > 25% or MemAvailable < 5%), thrash guard (> 20K refaults/cycle: "
             "20-cycle cooldown), 5 cycles between reclaims. MGLRU min_ttl_ms (memflux: 2000) is not set: MGLRU is off in "
             "the Debian 6.1 cloud kernel";
  using K = ParamKind;
  p.params = {
      param_def("interval_ms", K::Integer, "ms", 1000, 100, 600'000, "cycle length, ms (memflux interval_ms: 1000)"),
      param_def("step_mib", K::Number, "MiB", 32, 1.0 / 1024, std::nullopt,
            "bg memory.reclaim request per cycle, MiB (ours: the practitioners' 32 MiB batch)"),
      param_def("psi_some_min", K::Number, "%", 30, 0, 100,
            "PSI gate: bg PSI some over gate_window_s at least this, % (memflux: 1.5 x psi_threshold 0.20 for memory.reclaim)"),
      param_def("gate_window_s", K::Number, "s", 10, 1, 600,
            "PSI gate: the window PSI some is judged over, s (memflux reads avg10: 10)"),
      param_def("psi_full_max", K::Number, "%", 25, 0, 100, "crisis guard: bg PSI full over the cycle above this suspends, % (memflux: 25)"),
      param_def("mem_available_min", K::Number, "%", 5, 0, 100,
            "crisis guard: MemAvailable below this % of MemTotal suspends (memflux: 5)"),
      param_def("thrash_refaults", K::Integer, "pages", 20000, 0, std::nullopt,
            "thrash guard: bg refaults over one cycle above this start a cooldown, pages (memflux: 20K)"),
      param_def("thrash_cooldown_cycles", K::Integer, "cycles", 20, 0, 10'000, "thrash guard: cycles suspended after it fires (memflux: 20)"),
      param_def("cooldown_cycles", K::Integer, "cycles", 5, 0, 10'000, "cycles between two writes (memflux's anti-thrash cooldown: 5)"),
  };
  p.settings_check = [](const nlohmann::json& j, const ArmSettings& s) -> std::optional<ParamError> {
    const auto ms = j.at("interval_ms").get<std::int64_t>();
    const std::string shown = std::to_string(ms) + " ms";
    if (auto e = outlasts_pressure("interval_ms", shown, static_cast<double>(ms) / 1000, s, /*or_equal=*/true)) return e;
    if (auto e = under_one_tick("interval_ms", shown, static_cast<double>(ms) / 1000, s)) return e;
    const double window = j.at("gate_window_s").get<double>();
    const std::string wshown = readable_number(window) + " s";
    if (auto e = outlasts_pressure("gate_window_s", wshown, window, s, /*or_equal=*/true)) return e;
    if (auto e = under_one_tick("gate_window_s", wshown, window, s)) return e;
    return above_bg_limit("step_mib", j.at("step_mib").get<double>(), s);
  };
  p.make = [](const nlohmann::json& j) {
    Params q;
    q.interval_ns = j.at("interval_ms").get<std::int64_t>() * 1'000'000;
    q.step_bytes = std::llround(j.at("step_mib").get<double>() * harness::kernel::kMiB);
    q.psi_some_min = j.at("psi_some_min").get<double>();
    q.gate_window_ns = std::llround(j.at("gate_window_s").get<double>() * 1e9);
    q.psi_full_max = j.at("psi_full_max").get<double>();
    q.mem_available_min = j.at("mem_available_min").get<double>();
    q.thrash_refaults = j.at("thrash_refaults").get<std::int64_t>();
    q.thrash_cooldown_cycles = j.at("thrash_cooldown_cycles").get<std::int64_t>();
    q.cooldown_cycles = j.at("cooldown_cycles").get<std::int64_t>();
    return std::make_unique<MemfluxGuard>(q);
  };
  return p;
}

}  // namespace harness::case_
