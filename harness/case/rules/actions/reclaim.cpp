// Action `reclaim`: one write to bg memory.reclaim of `mib` MiB, `bytes` bytes, or
// `fraction` x bg memory.current (the tick's sample, floored), on the arm's writer thread
// (reclaim_writer.hpp: the same write, readings and settle as the study's 96 MiB write; one
// write in flight per arm). Events: `reclaim_start` when it starts, with bounded-reclaim's
// fields (trigger_t_ns: when the rule's detector fired, the trigger's tick for
// psi_window_trigger; requested_bytes) and the rule's (policy, rule, decision_t_ns,
// write_seq); `reclaim_end` and a reclaim_actions row once it returned (collected on a later
// tick or at finish), the record's fields as bounded-reclaim's plus the rule's. Skips, and
// says so, while the previous write (or its settle) is in flight, or when the fraction's
// memory.current was not read.
// Settings rule: `mib` or `bytes` below the bg limit, the study's rule for its dose (case/SPEC.md:
// 0 < dose_bytes < bg_memory_max_bytes; policy.hpp above_bg_limit).
#include "harness/case/rules/blocks.hpp"

#include "harness/kernel/fs.hpp"
#include "harness/kernel/size.hpp"

#include <fmt/format.h>

#include <cmath>

namespace harness::case_::rules {

namespace {
class Reclaim final : public RuleAction {
 public:
  explicit Reclaim(const nlohmann::json& p) {
    if (p.contains("mib")) bytes_ = std::llround(p.at("mib").get<double>() * harness::kernel::kMiB);
    else if (p.contains("bytes")) bytes_ = p.at("bytes").get<std::int64_t>();
    else fraction_ = p.at("fraction").get<double>();
  }

  Acted act(const Firing& by, const TickInput& tick, ActionContext& ctx, Shared& shared, std::vector<ControllerEvent>& events) override {
    Acted a;
    std::int64_t bytes = bytes_;
    if (fraction_) {
      const auto cur = tick.sample.bg_current_bytes;
      a.detail["fraction"] = *fraction_;
      a.detail["memory_current_bytes"] = cur ? nlohmann::json(*cur) : nlohmann::json();
      if (!cur) return skip(a, "bg memory.current not read this tick");
      bytes = static_cast<std::int64_t>(std::floor(*fraction_ * static_cast<double>(*cur)));
    }
    a.detail["bytes"] = bytes;
    if (bytes <= 0) return skip(a, "below one byte");
    ReclaimWriter& w = shared.reclaim_writer(ctx);
    if (w.busy()) return skip(a, "the previous write (or its settle) is still in flight");
    const int seq = w.started() + 1;
    nlohmann::json tag{{"policy", "rules"}, {"rule", by.rule}, {"decision_t_ns", tick.sample.t_ns}};
    events.push_back({harness::kernel::monotonic_ns(), "reclaim_start", std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                      nlohmann::json{{"policy", "rules"}, {"rule", by.rule}, {"decision_t_ns", tick.sample.t_ns},
                                     {"trigger_t_ns", by.detector_t_ns}, {"requested_bytes", bytes}, {"write_seq", seq}}});
    shared.write_tags[seq] = tag;
    // Concurrent limit reclaim: bg pgsteal over the 3 windows up to this tick (as bounded-reclaim).
    w.start(bytes, pgsteal_rate_before(ctx.telemetry, 3));
    a.requested_bytes = bytes;
    a.detail["write_seq"] = seq;
    return a;
  }

 private:
  static Acted skip(Acted a, std::string why) {
    a.action = "skip";
    a.reason = std::move(why);
    return a;
  }

  std::int64_t bytes_ = 0;
  std::optional<double> fraction_;
};
}  // namespace

RuleActionInfo action_reclaim() {
  RuleActionInfo a;
  a.name = "reclaim";
  a.summary = "one write to bg memory.reclaim: mib, bytes, or a fraction of bg memory.current (non-blocking)";
  a.params = {
      param_def("mib", ParamKind::Number, "MiB", nullptr, 1.0 / 1024, 1 << 20, "ask this many MiB (study: 96)"),
      param_def("bytes", ParamKind::Integer, "B", nullptr, 1, std::nullopt, "ask this many bytes"),
      param_def("fraction", ParamKind::Number, "ratio", nullptr, 0, 1, "ask this share of bg memory.current at the tick"),
  };
  a.check = [](const nlohmann::json& p) { return exactly_one_of(p, {"mib", "bytes", "fraction"}); };
  // Settings rule: mib or bytes below the bg limit, as the study's dose (policy.hpp above_bg_limit).
  a.settings_check = [](const nlohmann::json& p, const ArmSettings& s) -> std::optional<ParamError> {
    if (p.contains("mib")) return above_bg_limit("mib", p.at("mib").get<double>(), s, /*or_equal=*/true);
    if (!p.contains("bytes") || !s.bg_memory_max_mib) return std::nullopt;
    const auto bytes = p.at("bytes").get<std::int64_t>();
    const auto limit = static_cast<std::int64_t>(*s.bg_memory_max_mib * harness::kernel::kMiB);
    if (bytes < limit) return std::nullopt;
    return param_error("bytes", fmt::format("{} B must be below {} ({} MiB = {} B): bg never holds more than its memory.max "
                                            "to reclaim",
                                            bytes, s.bg_memory_max_field, readable_number(*s.bg_memory_max_mib), limit));
  };
  a.make = [](const nlohmann::json& p) { return std::make_unique<Reclaim>(p); };
  return a;
}

}  // namespace harness::case_::rules
