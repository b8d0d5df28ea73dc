// Calibration grid and case specs (harness/case/SPEC.md; constants as campaigns/smoke.yaml).
#include "harness/calibrate/grid.hpp"

#include <cmath>

#include <fmt/format.h>

namespace calib {

namespace {
constexpr std::int64_t kMiB = 1024 * 1024;
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
  return {
      {"case_id", "calib-" + p.name()},
      {"campaign", "calibration"},
      {"vm", "vm0"},
      {"regime", fmt::format("calib-{}", o.contents)},
      {"repeat", 1},
      {"configuration", "static-zram"},
      {"pinned_commit", "any"},
      {"vm_shape", {{"vcpus", 1}, {"memory_mib", 1024}}},
      {"phases_s", {{"warmup", o.warmup_s}, {"pressure", o.pressure_s}, {"recovery", o.recovery_s}}},
      {"cgroups", {{"parent", "harness"}, {"bg_memory_max_bytes", p.bg_max_mib * kMiB}}},
      {"backend",
       {{"zram_disksize_bytes", o.zram_disksize_mib * kMiB},
        {"zram_algorithm", "lzo-rle"},
        {"zram_priority", 100},
        {"swapfile_path", "/var/lib/harness/swapfile"},
        {"swapfile_priority", 10}}},
      {"pressure",
       {{"allocation_bytes", p.allocation_mib * kMiB},
        {"rate_mib_s", o.rate_mib_s},
        {"active_set_bytes", p.active_set_mib * kMiB},
        {"active_set_slide_mib_s", p.slide_mib_s},
        {"contents", o.contents},
        {"seed", 1}}},
      {"canaries",
       {{"period_ms", 100},
        {"compute_hot_bytes", 16 * kMiB},
        {"sqlite_db_path", "/var/lib/harness/canary.db"},
        {"sqlite_queries_per_request", 8},
        {"sqlite_offset_ms", 50},
        {"seed", 1}}},
      {"trigger", {{"window_ms", 1000}, {"min_increase_us", 1000}, {"consecutive_windows", 3}}},
      {"telemetry_period_ms", 1000},
      {"telemetry_offset_ms", 25},
  };
}

}  // namespace calib
