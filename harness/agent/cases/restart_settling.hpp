#pragma once
// Restart settling (harness/agent/API.md "Agent restart"): an agent that
// starts over a state directory where an earlier agent run stopped mid-case (killed,
// crashed, the VM's OOM killer) settles every case directory without a final status.json
// before it answers, and refuses cases while an old executor's process group lives.
#include "harness/agent/cases/executor_record.hpp"
#include "harness/agent/cases/registry.hpp"
#include "harness/agent/cases/unclean_mark.hpp"

#include <mutex>
#include <string>
#include <vector>

namespace harness::agent {

/// The executors of earlier agent runs whose process groups lived when this agent started.
/// While one lives it holds the busy slot (Busy::Holder::OldExecutor): no case,
/// qualification or reboot starts, and /v1/health says why.
class OldExecutors {
 public:
  /// Remembers the still-running executor of case `case_id`.
  void add(const std::string& case_id, const ExecutorRecord& r);

  /// Gives the busy slot of `reg` to the first remembered executor whose group still lives
  /// (group_alive, judged without the registry's lock), or frees it when none does; forgets
  /// the ended ones. Nothing when none is remembered, or when something else holds the slot.
  void refresh(Registry& reg);

 private:
  struct Old {
    std::string case_id;
    ExecutorRecord record;
  };
  std::mutex mu_;
  std::vector<Old> live_;  ///< under mu_
};

/// Settles every directory under <state-dir>/cases that has a valid case id and no final
/// status.json: its state from its bundle when there is one (the bundle's case row and
/// restoration verdict, the unclean mark written from it), else lost when its phase file
/// says the pressure phase had begun, infra_failed otherwise, the VM then marked unclean
/// (no verdict: its state is unknown) unless the executor never started (no spec.json).
/// Its `error` says that the agent running it stopped; exit_code null. A live executor
/// (executor.json, group_alive) is added to `old` and its case's `error` names its process
/// group. Returns the ids settled, for the log. Errors of one case are logged, never thrown.
std::vector<std::string> settle_unfinished_cases(Registry& reg, UncleanMark& mark, OldExecutors& old);

}  // namespace harness::agent
