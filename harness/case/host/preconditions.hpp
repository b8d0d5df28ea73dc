#pragma once
// What must hold before a case touches the host, checked in this order by the executor
// (SPEC.md "Executor decisions"): the workload binaries and the canary DB are there, the
// executor is out of the OOM killer's reach, the leftovers of a crashed earlier case are
// gone (the cause first: a leftover that cannot be released stops the case before
// qualification and before any cgroup exists), and the host qualifies (qualify/). Each
// returns Checked: passed, or the infra_failed reason.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/error/expected.hpp"

#include "harness/case/host/case_cgroups.hpp"
#include "harness/case/run/executor_options.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/kernel/fs.hpp"
#include "qualify/qualify.hpp"

namespace harness::case_ {

/// pressure-gen, canary-compute and canary-sqlite executable in `bin_dir`, and the SQLite
/// canary's DB readable (spec canaries.sqlite_db_path).
Checked check_workload_inputs(const std::string& bin_dir, const CaseSpec& spec);

/// oom_score_adj -1000 for the executor (its workloads get 0 back: process.hpp).
Checked protect_from_oom_killer(const harness::kernel::Fs& fs);

/// Removes what an earlier case of this harness left (cgroup.kill and rmdir of the parent;
/// Backend::cleanup_leftovers for the swapfile and the marked zram device). Appends the
/// steps. The reason names the failing step and its errno, or the cgroup still there.
Checked clean_leftovers(const harness::kernel::Fs& fs, const CaseCgroups& cgroups, const BackendSpec& backend,
                        std::vector<StepRecord>& steps);

/// The qualification of the host for the case.
struct Qualification {
  nlohmann::json report;  ///< cases.qualification_json
  bool skipped = false;   ///< --skip-qualification (development only)
  std::optional<std::string> failure;  ///< "host not qualified: <reasons>"
};
Qualification qualify_host(const CaseSpec& spec, const ExecutorOptions& opt);

}  // namespace harness::case_
