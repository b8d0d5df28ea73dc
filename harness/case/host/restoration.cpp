// Restoration after a case (restoration.hpp).
#include "harness/case/host/restoration.hpp"

#include <algorithm>
#include <cerrno>

#include "harness/case/run/case_clock.hpp"
#include "harness/kernel/errors.hpp"
#include "harness/kernel/swap.hpp"

namespace harness::case_ {

OomOutcome oom_delta(const OomCounts& start, const OomCounts& end) {
  auto d = [](std::optional<std::int64_t> a, std::optional<std::int64_t> z) {
    return a && z ? std::optional<std::int64_t>(*z - *a) : std::nullopt;
  };
  return {d(start.bg_oom_kill, end.bg_oom_kill), d(start.fg_oom_kill, end.fg_oom_kill), d(start.bg_oom, end.bg_oom),
          d(start.fg_oom, end.fg_oom)};
}

RestorationResult restore_case(RestorationInputs& in, std::vector<StepRecord>& steps) {
  RestorationResult r;
  r.row.start_ns = harness::kernel::monotonic_ns();
  const std::int64_t budget_end = r.row.start_ns + static_cast<std::int64_t>(in.timeout_s) * kSec;
  auto left = [&] { return std::max<std::int64_t>(0, budget_end - harness::kernel::monotonic_ns()); };
  // 0. OOM counters before anything is killed (cgroup.kill is not an OOM kill).
  r.oom = oom_delta(in.oom_start, in.cgroups.oom_counts());
  // 1. stop processes: TERM, wait, then cgroup.kill.
  const auto t_stop = harness::kernel::monotonic_ns();
  for (auto& c : in.children.all())
    if (!c.exit) in.children.term(c);
  for (auto& c : in.children.all()) in.children.reap(c, std::min<std::int64_t>(5 * kSec, left()));
  steps.push_back({"stop processes (SIGTERM, wait)", harness::kernel::monotonic_ns() - t_stop, 0, "ok"});
  if (in.cgroups.parent().exists())
    steps.push_back(in.cgroups.kill_all(std::min<std::int64_t>(10 * kSec, budget_end - harness::kernel::monotonic_ns())));
  for (auto& c : in.children.all()) in.children.reap(c, 2 * kSec);
  // 2. swapoff and zram reset; 3. rmdir.
  in.backend.teardown(steps);
  in.cgroups.remove(steps);
  // 4. verify.
  RestorationObservation obs;
  try {
    obs.swaps = harness::kernel::read_swaps(in.fs);
  } catch (const harness::kernel::Error& e) {
    steps.push_back({"read /proc/swaps", 0, EIO, e.what()});
    obs.swaps.push_back({"/proc/swaps unreadable", "unknown", 0, 1, 0});
  }
  obs.case_swap_paths = in.backend.enabled_paths();
  obs.cgroups_present = in.cgroups.present();
  obs.stray_pids = in.cgroups.pids();
  for (const auto& c : in.children.all())
    if (!c.exit && process_alive(c.pid)) obs.stray_pids.push_back(c.pid);
  if (const auto* z = in.backend.zram()) {
    // A hot-added device is gone once released; a borrowed spare must read disksize 0.
    if (in.backend.zram_origin() == harness::kernel::ZramOrigin::HotAdd && z->exists()) obs.owned_zram_left = z->dev_path();
    if (z->exists()) {
      try {
        obs.zram_disksize_bytes = z->disksize_bytes();
      } catch (const harness::kernel::Error& e) {
        steps.push_back({"read zram disksize", 0, EIO, e.what()});
      }
    }
  }
  r.zram = in.backend.zram_record();
  // The VM back to its baseline (vm_state.hpp): settle, read, judge.
  settle_vm(in.fs, steps);
  r.vm_end = read_vm_state(in.fs);
  if (in.vm_baseline) {
    r.baseline_check = check_vm_baseline(r.vm_end, *in.vm_baseline);
    obs.vm_baseline_problem = r.baseline_check->problem;
  }
  if (in.variant) obs.variant_problems = in.variant->restore();
  r.verdict = verify_restoration(obs);
  r.row.end_ns = harness::kernel::monotonic_ns();
  r.row.clean = r.verdict.clean;
  r.row.detail = {{"steps", steps_json(steps)},
                  {"verdict", r.verdict.to_json()},
                  {"budget_s", in.timeout_s},
                  {"over_budget", r.row.end_ns > budget_end}};
  r.phase = {"restoration", r.row.start_ns, r.row.end_ns};
  return r;
}

}  // namespace harness::case_
