// Detector `refaults`: bg workingset refaults (memory.stat workingset_refault_anon + _file,
// pages) per window, averaged over the last `windows` telemetry windows, above `above_pages`.
// Unmeasured (neither counter read at one end, or fewer samples): does not hold.
#include "harness/case/rules/blocks.hpp"

namespace harness::case_::rules {

namespace {
std::optional<std::int64_t> refaults_of(const TelemetrySample& s) {
  if (!s.bg_workingset_refault_anon && !s.bg_workingset_refault_file) return std::nullopt;
  return s.bg_workingset_refault_anon.value_or(0) + s.bg_workingset_refault_file.value_or(0);
}

class Refaults final : public Detector {
 public:
  explicit Refaults(const nlohmann::json& p)
      : windows_(p.at("windows").get<std::int64_t>()), above_(p.at("above_pages").get<double>()) {}

  Observation observe(const TickInput&, ActionContext& ctx) override {
    Observation o;
    const auto& t = ctx.telemetry;
    o.inputs["windows"] = windows_;
    if (t.size() <= static_cast<std::size_t>(windows_)) {
      o.inputs["unmeasured"] = "fewer samples than windows + 1";
      return o;
    }
    const auto a = refaults_of(t[t.size() - 1 - static_cast<std::size_t>(windows_)]), z = refaults_of(t.back());
    if (!a || !z) {
      o.inputs["unmeasured"] = "bg workingset refaults not read at both ends";
      return o;
    }
    const double per_window = static_cast<double>(*z - *a) / static_cast<double>(windows_);
    o.inputs["refaults"] = *z - *a;
    o.inputs["per_window"] = per_window;
    o.holds = per_window > above_;
    return o;
  }

 private:
  std::int64_t windows_;
  double above_;
};
}  // namespace

DetectorInfo detector_refaults() {
  DetectorInfo d;
  d.name = "refaults";
  d.summary = "bg workingset refaults (anon + file) per window, over the last N windows, above a threshold";
  d.params = {
      param_def("windows", ParamKind::Integer, "windows", 1, 1, 3600, "how many telemetry windows (ticks) back"),
      param_def("above_pages", ParamKind::Number, "pages", nullptr, 0, std::nullopt,
                  "holds when refaults per window are above this (memflux's thrash guard: 20000 per 1 s cycle)"),
  };
  d.check = [](const nlohmann::json& p) { return p.contains("above_pages") ? Checked() : problem("needs above_pages"); };
  d.make = [](const nlohmann::json& p) { return std::make_unique<Refaults>(p); };
  return d;
}

}  // namespace harness::case_::rules
