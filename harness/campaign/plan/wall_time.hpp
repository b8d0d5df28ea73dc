#pragma once
// The expected wall time of a planned campaign, printed by `harness plan`: per case the
// phases (warmup + pressure + recovery) plus the per-case overhead, one case at a time per
// guest, guests in parallel (the runner's rule, runner.hpp), after what each run pays once
// per host before its first case (the KVM trial and the image upload; the engine does those
// one host after the other).
//
// The boot per case, the KVM trial and the upload are what the engine measured on the
// guest's host in earlier runs (harness/pool/host_costs.hpp: a boot is the median of its last
// boots there), each said "measured on DATE"; a host with nothing measured gets the assumed
// CaseOverhead::fresh_boot_s, said "assumed 10 s, not yet measured", and no trial or upload.
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/plan/schedule.hpp"
#include "harness/pool/host_costs.hpp"

#include <string>
#include <vector>

namespace harness::campaign {

/// Per-case overhead beyond the phases, seconds: the one place these figures live.
/// Measured on the development machine (2 cores, TCG; docs/DESIGN.md "Command 1 end to end"): a fresh
/// local guest answers 9.2-10.1 s after its boot starts; the executor's start lead before T0
/// (3 s, case/SPEC.md) plus submission, bundle download and import take about 3.5 s;
/// restoration took 154-348 ms. The boot is only assumed for a host with no boot measured
/// there (the libvirt README measured 33-83 s on a loaded machine).
struct CaseOverhead {
  double fresh_boot_s = 10.0;    ///< assumed boot, only with a boot per case (a fresh guest, or reboot_between_cases)
  double setup_finish_s = 3.5;   ///< start lead, submission, bundle download and import
  double restoration_s = 0.3;    ///< stop, swapoff, zram reset, cgroup removal, checks
};

/// The figures above.
inline constexpr CaseOverhead kMeasuredOverhead{};

/// What the engine measured on one host (pool::read_host_costs), and the campaign guests
/// placed there (the capacity row's guests).
struct HostMeasurements {
  std::vector<std::string> guests;
  pool::HostCosts costs;
};

struct WallTimeEstimate {
  int cases = 0;
  int guests_at_once = 0;          ///< guests with cases (each runs one case at a time)
  double phases_s = 0;             ///< warmup + pressure + recovery of one case
  double overhead_s = 0;           ///< per case of the busiest guest (its host's boot only with fresh boots)
  double once_s = 0;               ///< once per run before the cases: every host's measured KVM trial and upload
  double wall_s = 0;               ///< once_s + the busiest guest's cases x (phases + overhead)
  double guest_hours = 0;          ///< all cases x (phases + their overhead), hours
  std::string text;                ///< one line for `harness plan`
};

/// The estimate for schedule `s` of `c`; `fresh_boot_per_case`: each case starts on a boot (the
/// engine boots a fresh guest, or the hosts file says reboot_between_cases); `hosts`: what was
/// measured per host (a guest on no listed host, or on one with no boot measured, gets
/// o.fresh_boot_s).
WallTimeEstimate estimate_wall_time(const Campaign& c, const Schedule& s, bool fresh_boot_per_case,
                                    const std::vector<HostMeasurements>& hosts = {},
                                    const CaseOverhead& o = kMeasuredOverhead);

/// "3 h 24 min", "9 min 30 s", "45 s".
std::string human_duration(double seconds);

}  // namespace harness::campaign
