#pragma once
// `harness calibrate`: the grid of static-zram calibration cases and their case specs.
// Each point is one short static-zram case (no trigger action) whose pressure-phase
// swap-out and refaults are compared with the study's medians (choose.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace harness::calibrate {

/// One grid point: the pressure episode's shape.
struct Point {
  std::int64_t allocation_mib = 0;  ///< pressure.allocation_bytes / MiB (> bg_max_mib)
  std::int64_t active_set_mib = 0;  ///< pressure.active_set_bytes / MiB
  double slide_mib_s = 0;           ///< pressure.active_set_slide_mib_s, MiB/s
  std::int64_t bg_max_mib = 0;      ///< cgroups.bg_memory_max_bytes / MiB
  /// "a<alloc>-s<active>-v<slide x1000>-m<bg max>", e.g. a320-s128-v375-m300 (case ids).
  std::string name() const;
};

/// What every case of the grid shares.
struct GridOptions {
  double rate_mib_s = 16;        ///< allocation rate (the study's slow regime)
  std::string contents = "structured";
  std::int64_t warmup_s = 10, pressure_s = 120, recovery_s = 5;
  std::int64_t zram_disksize_mib = 512;
};

/// Cartesian product of the lists (allocation-major); points with allocation <= bg max
/// or active set > allocation are skipped (the spec would refuse them).
std::vector<Point> make_grid(const std::vector<std::int64_t>& allocation_mib,
                             const std::vector<std::int64_t>& active_set_mib,
                             const std::vector<double>& slide_mib_s, const std::vector<std::int64_t>& bg_max_mib);

/// The static-zram case spec (harness/case/SPEC.md) of one point; case id "calib-<name>".
nlohmann::json spec_for(const Point& p, const GridOptions& o);

}  // namespace harness::calibrate
