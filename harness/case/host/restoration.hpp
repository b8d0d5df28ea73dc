#pragma once
// Restoration (docs/DESIGN.md "Restoration"): puts the host back after a case and judges
// the result, as a function of what it works on (the case's cgroups, backend, processes,
// VM baseline, A/B variant) so that it runs, and is tested, over a fixture tree.
//
//   0. the OOM counters first (cgroup.kill is not an OOM kill);
//   1. stop the processes: SIGTERM, wait (5 s at most), cgroup.kill of the parent
//      (10 s at most), wait 2 s more for each;
//   2. swapoff, zram reset and hot_remove (Backend::teardown); 3. rmdir fg, bg, parent;
//   4. verify: /proc/swaps, the case's devices, cgroups, stray processes, zram disksize,
//      the hot-added device gone; settle the VM and judge it against its baseline
//      (vm_state.hpp); write the variant's knobs back (variant.hpp); verify_restoration.
// Every step is recorded with its errno and never throws for kernel errors: a step that
// fails part-way is a problem of the verdict, and the steps after it still run.
#include <cstdint>
#include <optional>
#include <vector>

#include "harness/case/host/backend.hpp"
#include "harness/case/run/bundle.hpp"
#include "harness/case/host/case_cgroups.hpp"
#include "harness/case/host/children.hpp"
#include "harness/case/host/restoration_check.hpp"
#include "harness/case/spec/variant.hpp"
#include "harness/case/host/vm_state.hpp"

namespace harness::case_ {

/// outcome_json.oom_kills / oom_events: memory.events deltas over the case (null = unread).
struct OomOutcome {
  std::optional<std::int64_t> bg_kills, fg_kills, bg_events, fg_events;
};
/// Deltas `end - start` of each counter both readings have.
OomOutcome oom_delta(const OomCounts& start, const OomCounts& end);

/// What restoration works on.
struct RestorationInputs {
  harness::kernel::Fs fs;
  CaseCgroups& cgroups;
  Backend& backend;
  Children& children;
  int timeout_s = 120;                       ///< spec restoration_timeout_s (budget of the steps)
  OomCounts oom_start;                       ///< read after setup
  std::optional<VmBaseline> vm_baseline;     ///< the VM's first-case baseline, if any
  VariantApplier* variant = nullptr;         ///< the case's A/B variant, if any
};

/// What restoration found.
struct RestorationResult {
  RestorationRow row;               ///< bundle `restoration` (detail: steps, verdict, budget_s, over_budget)
  PhaseRecord phase;                ///< the `restoration` phase row
  OomOutcome oom;
  std::optional<ZramRecord> zram;   ///< Backend::zram_record() after teardown
  VmState vm_end;
  std::optional<BaselineCheck> baseline_check;  ///< with a baseline only
  RestorationVerdict verdict;
};

/// Runs the steps above, appending each to `steps` (the case's restoration log: the row's
/// detail lists all of them). Reaps and records the children in `in.children`.
RestorationResult restore_case(RestorationInputs& in, std::vector<StepRecord>& steps);

}  // namespace harness::case_
