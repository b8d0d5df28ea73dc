// Restoration verification rules (docs/DESIGN.md "Restoration").
#include "harness/case/host/restoration_check.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace harness::case_ {

nlohmann::json RestorationVerdict::to_json() const { return {{"clean", clean}, {"problems", problems}}; }

RestorationVerdict verify_restoration(const RestorationObservation& obs) {
  RestorationVerdict v;
  for (const auto& d : obs.swaps) {
    bool ours = std::find(obs.case_swap_paths.begin(), obs.case_swap_paths.end(), d.path) != obs.case_swap_paths.end();
    if (ours) v.problems.push_back(fmt::format("swap device {} enabled by the case is still active ({} KiB used)", d.path, d.used_kib));
    else if (d.used_kib > 0) v.problems.push_back(fmt::format("swap in use: {} holds {} KiB", d.path, d.used_kib));
  }
  for (const auto& c : obs.cgroups_present) v.problems.push_back(fmt::format("cgroup {} still exists", c));
  for (pid_t p : obs.stray_pids) v.problems.push_back(fmt::format("stray process {} still alive", p));
  if (obs.zram_disksize_bytes && *obs.zram_disksize_bytes != 0)
    v.problems.push_back(fmt::format("zram not reset: disksize {} bytes", *obs.zram_disksize_bytes));
  if (!obs.owned_zram_left.empty())
    v.problems.push_back(fmt::format("zram device {} created by the harness still exists (not hot-removed)", obs.owned_zram_left));
  if (!obs.vm_baseline_problem.empty()) v.problems.push_back(obs.vm_baseline_problem);
  for (const auto& p : obs.variant_problems) v.problems.push_back(p);
  v.clean = v.problems.empty();
  return v;
}

}  // namespace harness::case_
