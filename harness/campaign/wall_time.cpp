// Expected wall time of a campaign (see wall_time.hpp).
#include "harness/campaign/wall_time.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace harness::campaign {

std::string human_duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  if (s >= 3600) return fmt::format("{} h {} min", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{} min {} s", s / 60, s % 60);
  return fmt::format("{} s", s);
}

WallTimeEstimate estimate_wall_time(const Campaign& c, const Schedule& s, bool fresh_boot_per_case,
                                    const CaseOverhead& o) {
  WallTimeEstimate e;
  e.cases = static_cast<int>(s.cases.size());
  e.phases_s = c.warmup_s + c.pressure_s + c.recovery_s;
  e.overhead_s = (fresh_boot_per_case ? o.fresh_boot_s : 0.0) + o.setup_finish_s + o.restoration_s;
  std::map<std::string, int> per_vm;
  for (const auto& k : s.cases) ++per_vm[k.vm];
  int busiest = 0;
  for (const auto& [vm, n] : per_vm) busiest = std::max(busiest, n);
  e.guests_at_once = static_cast<int>(per_vm.size());
  const double per_case = e.phases_s + e.overhead_s;
  e.wall_s = busiest * per_case;
  e.guest_hours = e.cases * per_case / 3600.0;
  std::string parts = fresh_boot_per_case ? fmt::format("a boot per case {:g} s + ", o.fresh_boot_s) : std::string();
  parts += fmt::format("setup and finish {:g} s + restoration {:g} s", o.setup_finish_s, o.restoration_s);
  e.text = fmt::format(
      "expected wall time: {} with {} guest(s) running at once (the busiest runs {} case(s) of {:g} s of phases + "
      "{:g} s overhead: {}, measured on a 2-core TCG machine, README \"Measured here\"); {} case(s), {:.1f} "
      "guest-hours",
      human_duration(e.wall_s), e.guests_at_once, busiest, e.phases_s, e.overhead_s, parts, e.cases, e.guest_hours);
  return e;
}

}  // namespace harness::campaign
