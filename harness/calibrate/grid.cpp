// Calibration grid and case specs (harness/case/SPEC.md; the local guest's constants, spec_writer.hpp).
#include "harness/calibrate/grid.hpp"

#include <cmath>

#include <fmt/format.h>

#include "harness/case/control/policy.hpp"
#include "harness/case/spec/spec_writer.hpp"
#include "harness/kernel/size.hpp"

namespace harness::calibrate {

namespace {
using harness::kernel::kMiB;
}

std::string Point::name() const {
  return fmt::format("a{}-s{}-v{}-m{}", allocation_mib, active_set_mib,
                     static_cast<long long>(std::llround(slide_mib_s * 1000)), bg_max_mib);
}

std::vector<Point> make_grid(const std::vector<std::int64_t>& alloc, const std::vector<std::int64_t>& active,
                             const std::vector<double>& slide, const std::vector<std::int64_t>& bg_max) {
  std::vector<Point> out;
  for (auto a : alloc)
    for (auto s : active)
      for (auto v : slide)
        for (auto m : bg_max) {
          if (a <= m || s > a) continue;
          out.push_back({a, s, v, m});
        }
  return out;
}

nlohmann::json spec_for(const Point& p, const GridOptions& o) {
  // The study's static zram (the first of the registry's study arms): zram on, no action.
  harness::case_::CaseSpec s =
      harness::case_::local_guest_case("calib-" + p.name(), "calibration", harness::case_::study_arms().front());
  s.regime = fmt::format("calib-{}", o.contents);
  s.phases = {o.warmup_s, o.pressure_s, o.recovery_s};
  s.cgroups.bg_memory_max_bytes = p.bg_max_mib * kMiB;
  s.backend.zram_disksize_bytes = o.zram_disksize_mib * kMiB;
  s.pressure.allocation_bytes = p.allocation_mib * kMiB;
  s.pressure.rate_mib_s = o.rate_mib_s;
  s.pressure.active_set_bytes = p.active_set_mib * kMiB;
  s.pressure.active_set_slide_mib_s = p.slide_mib_s;
  s.pressure.contents = o.contents;
  return harness::case_::spec_json(s);
}

}  // namespace harness::calibrate
