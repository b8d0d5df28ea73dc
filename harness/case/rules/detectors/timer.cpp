// Detector `timer`: time since the pressure phase started (the tick's t_ns - the
// pressure-start tick), seconds: holds from after_s on (and, with before_s, until before it).
#include "harness/case/rules/blocks.hpp"

#include <cmath>

namespace harness::case_::rules {

namespace {
class Timer final : public Detector {
 public:
  explicit Timer(const nlohmann::json& p)
      : after_ns_(std::llround(p.at("after_s").get<double>() * 1e9)),
        before_ns_(p.contains("before_s") ? std::optional(std::llround(p.at("before_s").get<double>() * 1e9)) : std::nullopt) {}

  Observation observe(const TickInput& tick, ActionContext&) override {
    Observation o;
    const std::int64_t since = tick.sample.t_ns - tick.pressure_start_ns;
    o.inputs["since_pressure_start_ns"] = since;
    o.holds = since >= after_ns_ && (!before_ns_ || since < *before_ns_);
    return o;
  }

 private:
  std::int64_t after_ns_;
  std::optional<std::int64_t> before_ns_;
};
}  // namespace

DetectorInfo detector_timer() {
  DetectorInfo d;
  d.name = "timer";
  d.summary = "seconds since the pressure phase started: holds from after_s (until before_s, when given)";
  d.params = {
      param_def("after_s", ParamKind::Number, "s", nullptr, 0, 86'400, "holds from this long after the pressure start"),
      param_def("before_s", ParamKind::Number, "s", nullptr, 0, 86'400, "and stops holding at this (optional)"),
  };
  d.check = [](const nlohmann::json& p) -> Checked {
    if (!p.contains("after_s")) return problem("needs after_s");
    if (p.contains("before_s") && p.at("before_s").get<double>() <= p.at("after_s").get<double>())
      return problem("before_s must be above after_s");
    return {};
  };
  d.make = [](const nlohmann::json& p) { return std::make_unique<Timer>(p); };
  return d;
}

}  // namespace harness::case_::rules
