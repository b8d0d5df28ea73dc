// Detector `psi`: bg memory PSI (`some` or `full`) over the last `windows` telemetry windows
// as a share of their wall time, % (stall us x 1000 / ns between the read times of the
// samples `windows` ticks apart, x 100), against a threshold: above_pct (holds when the share
// is > it) or below_pct (holds when < it). Unmeasured (a total or an earlier sample missing,
// or no elapsed read time): does not hold, and the inputs say why.
#include "harness/case/rules/blocks.hpp"

namespace harness::case_::rules {

namespace {
class Psi final : public Detector {
 public:
  explicit Psi(const nlohmann::json& p)
      : full_(p.at("kind").get<std::string>() == "full"),
        windows_(p.at("windows").get<std::int64_t>()),
        above_(p.contains("above_pct")),
        threshold_(p.contains("above_pct") ? p.at("above_pct").get<double>() : p.at("below_pct").get<double>()) {}

  Observation observe(const TickInput&, ActionContext& ctx) override {
    Observation o;
    const auto& t = ctx.telemetry;
    o.inputs["kind"] = full_ ? "full" : "some";
    o.inputs["windows"] = windows_;
    if (t.size() <= static_cast<std::size_t>(windows_)) {
      o.inputs["unmeasured"] = "fewer samples than windows + 1";
      return o;
    }
    const TelemetrySample& z = t.back();
    const TelemetrySample& a = t[t.size() - 1 - static_cast<std::size_t>(windows_)];
    const auto a_us = psi_total(a, full_), z_us = psi_total(z, full_);
    const std::int64_t span_ns = read_time_ns(z) - read_time_ns(a);
    if (!a_us || !z_us || span_ns <= 0) {
      o.inputs["unmeasured"] = "bg memory.pressure not read at both ends, or no elapsed time";
      return o;
    }
    const double pct = 100.0 * static_cast<double>(*z_us - *a_us) * 1000.0 / static_cast<double>(span_ns);
    o.inputs["delta_us"] = *z_us - *a_us;
    o.inputs["span_ns"] = span_ns;
    o.inputs["pct"] = pct;
    o.holds = above_ ? pct > threshold_ : pct < threshold_;
    return o;
  }

 private:
  bool full_;
  std::int64_t windows_;
  bool above_;
  double threshold_;
};
}  // namespace

DetectorInfo detector_psi() {
  DetectorInfo d;
  d.name = "psi";
  d.summary = "bg memory PSI some or full over the last N windows, % of their wall time, above or below a threshold";
  ParamDef kind = param_def("kind", ParamKind::Text, "", "some", std::nullopt, std::nullopt, "some | full");
  kind.check = [](const nlohmann::json& v) -> Checked {
    if (v == "some" || v == "full") return {};
    return problem("must be \"some\" or \"full\", not " + v.dump());
  };
  d.params = {
      kind,
      param_def("windows", ParamKind::Integer, "windows", 1, 1, 3600, "how many telemetry windows (ticks) back"),
      param_def("above_pct", ParamKind::Number, "%", nullptr, 0, 100, "holds when the share is above this"),
      param_def("below_pct", ParamKind::Number, "%", nullptr, 0, 100, "holds when the share is below this"),
  };
  d.check = [](const nlohmann::json& p) { return exactly_one_of(p, {"above_pct", "below_pct"}); };
  d.make = [](const nlohmann::json& p) { return std::make_unique<Psi>(p); };
  return d;
}

}  // namespace harness::case_::rules
