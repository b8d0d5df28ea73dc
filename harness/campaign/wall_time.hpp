#pragma once
// The expected wall time of a planned campaign, printed by `harness plan`: per case the
// phases (warmup + pressure + recovery) plus the measured per-case overhead, one case at a
// time per guest, guests in parallel (the runner's rule, runner.hpp).
#include "harness/campaign/campaign.hpp"
#include "harness/campaign/schedule.hpp"

#include <string>

namespace harness::campaign {

/// Per-case overhead beyond the phases, seconds: the one place these figures live.
/// Measured on the development machine (2 cores, TCG; README "Measured here"): a fresh
/// local guest answers 9.2-10.1 s after its boot starts; the executor's start lead before T0
/// (3 s, case/SPEC.md) plus submission, bundle download and import take about 3.5 s;
/// restoration took 154-348 ms. Real VMs and KVM boot faster; the estimate is an upper guide.
struct CaseOverhead {
  double fresh_boot_s = 10.0;    ///< only with a boot per case (a fresh guest, or reboot_between_cases)
  double setup_finish_s = 3.5;   ///< start lead, submission, bundle download and import
  double restoration_s = 0.3;    ///< stop, swapoff, zram reset, cgroup removal, checks
};

/// The figures above.
inline constexpr CaseOverhead kMeasuredOverhead{};

struct WallTimeEstimate {
  int cases = 0;
  int guests_at_once = 0;          ///< guests with cases (each runs one case at a time)
  double phases_s = 0;             ///< warmup + pressure + recovery of one case
  double overhead_s = 0;           ///< per case (kMeasuredOverhead; the boot only with fresh boots)
  double wall_s = 0;               ///< the busiest guest's cases x (phases + overhead)
  double guest_hours = 0;          ///< all cases x (phases + overhead), hours
  std::string text;                ///< one line for `harness plan`
};

/// The estimate for schedule `s` of `c`; `fresh_boot_per_case`: each case starts on a boot (the
/// engine boots a fresh guest, or the hosts file says reboot_between_cases).
WallTimeEstimate estimate_wall_time(const Campaign& c, const Schedule& s, bool fresh_boot_per_case,
                                    const CaseOverhead& o = kMeasuredOverhead);

/// "3 h 24 min", "9 min 30 s", "45 s".
std::string human_duration(double seconds);

}  // namespace harness::campaign
