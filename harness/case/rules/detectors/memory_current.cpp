// Detector `memory_current`: bg memory.current (the tick's sample) against a threshold:
// above_mib (holds when > it) or below_mib (holds when < it). Not read this tick: does not hold.
#include "harness/case/rules/blocks.hpp"

#include "harness/kernel/size.hpp"

#include <cmath>

namespace harness::case_::rules {

namespace {
class MemoryCurrent final : public Detector {
 public:
  explicit MemoryCurrent(const nlohmann::json& p)
      : above_(p.contains("above_mib")),
        threshold_bytes_(std::llround((above_ ? p.at("above_mib") : p.at("below_mib")).get<double>() * harness::kernel::kMiB)) {}

  Observation observe(const TickInput& tick, ActionContext&) override {
    Observation o;
    o.inputs["threshold_bytes"] = threshold_bytes_;
    const auto cur = tick.sample.bg_current_bytes;
    o.inputs["memory_current_bytes"] = cur ? nlohmann::json(*cur) : nlohmann::json();
    if (cur) o.holds = above_ ? *cur > threshold_bytes_ : *cur < threshold_bytes_;
    return o;
  }

 private:
  bool above_;
  std::int64_t threshold_bytes_;
};
}  // namespace

DetectorInfo detector_memory_current() {
  DetectorInfo d;
  d.name = "memory_current";
  d.summary = "bg memory.current above or below a threshold, MiB";
  d.params = {
      param_def("above_mib", ParamKind::Number, "MiB", nullptr, 0, std::nullopt, "holds when memory.current is above this"),
      param_def("below_mib", ParamKind::Number, "MiB", nullptr, 0, std::nullopt, "holds when memory.current is below this"),
  };
  d.check = [](const nlohmann::json& p) { return exactly_one_of(p, {"above_mib", "below_mib"}); };
  d.make = [](const nlohmann::json& p) { return std::make_unique<MemoryCurrent>(p); };
  return d;
}

}  // namespace harness::case_::rules
