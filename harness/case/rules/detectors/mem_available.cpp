// Detector `mem_available`: system-wide MemAvailable as % of MemTotal (/proc/meminfo, read
// through the kernel layer on the case's Fs root, on each tick the rule judges), against
// below_pct (holds when < it; memflux's crisis guard: 5) or above_pct. Unreadable: does not hold.
#include "harness/case/rules/blocks.hpp"

#include "harness/kernel/errors.hpp"
#include "harness/kernel/procfs.hpp"

namespace harness::case_::rules {

namespace {
class MemAvailable final : public Detector {
 public:
  explicit MemAvailable(const nlohmann::json& p)
      : above_(p.contains("above_pct")),
        threshold_(p.contains("above_pct") ? p.at("above_pct").get<double>() : p.at("below_pct").get<double>()) {}

  Observation observe(const TickInput&, ActionContext& ctx) override {
    Observation o;
    try {
      const auto m = harness::kernel::read_meminfo(ctx.bg.fs());
      const auto avail = m.get("MemAvailable"), total = m.get("MemTotal");
      if (!avail || !total || *total == 0) {
        o.inputs["unmeasured"] = "MemAvailable or MemTotal missing";
        return o;
      }
      const double pct = 100.0 * static_cast<double>(*avail) / static_cast<double>(*total);
      o.inputs["mem_available_kib"] = *avail;
      o.inputs["mem_total_kib"] = *total;
      o.inputs["pct"] = pct;
      o.holds = above_ ? pct > threshold_ : pct < threshold_;
    } catch (const harness::kernel::Error& e) {
      o.inputs["unmeasured"] = e.what();
    }
    return o;
  }

 private:
  bool above_;
  double threshold_;
};
}  // namespace

DetectorInfo detector_mem_available() {
  DetectorInfo d;
  d.name = "mem_available";
  d.summary = "system MemAvailable as % of MemTotal, below or above a threshold";
  d.params = {
      param_def("below_pct", ParamKind::Number, "%", nullptr, 0, 100, "holds when MemAvailable is below this share"),
      param_def("above_pct", ParamKind::Number, "%", nullptr, 0, 100, "holds when MemAvailable is above this share"),
  };
  d.check = [](const nlohmann::json& p) { return exactly_one_of(p, {"above_pct", "below_pct"}); };
  d.make = [](const nlohmann::json& p) { return std::make_unique<MemAvailable>(p); };
  return d;
}

}  // namespace harness::case_::rules
