#pragma once
// The case's workload processes (pressure-gen, canary-compute, canary-sqlite): started in
// their cgroup (process.hpp), sent SIGTERM, reaped, and recorded for
// outcome_json.processes and .argv. Their stdout and stderr go to <work dir>/<name>.stdout
// and .stderr (stored as artifacts by trace_import.hpp).
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/case/host/process.hpp"
#include "harness/kernel/cgroup.hpp"

namespace harness::case_ {

/// One workload process of the case.
struct ChildRecord {
  std::string name;  ///< pressure-gen | canary-compute | canary-sqlite
  pid_t pid = -1;
  std::vector<std::string> argv;
  std::int64_t spawned_ns = 0;          ///< CLOCK_MONOTONIC ns, right after it was released to exec
  std::optional<std::int64_t> term_ns;  ///< when SIGTERM was first sent
  std::optional<ExitInfo> exit;         ///< nullopt = not reaped (yet)
  std::string stdout_path, stderr_path;
};

class Children {
 public:
  /// Output files go to `work_dir`.
  explicit Children(std::string work_dir);

  /// Starts `argv` as `name` in `cg` (spawn_in_cgroup) and records it. Throws SpawnError.
  const ChildRecord& spawn(const std::string& name, const std::vector<std::string>& argv, const harness::kernel::Cgroup& cg);
  /// The child called `name`, or nullptr.
  ChildRecord* find(const std::string& name);
  /// Sends SIGTERM (again, if it already had one); term_ns keeps the first time.
  void term(ChildRecord& c) const;
  /// Reaps `c` if it has not been: waits up to `timeout_ns` (wait_for_exit). Throws SpawnError.
  void reap(ChildRecord& c, std::int64_t timeout_ns) const;
  /// At the end of the schedule: when it stopped early (`stopped`), SIGTERM to each child
  /// that has not had one; then each is reaped, waiting until CLOCK_MONOTONIC `deadline_ns`
  /// at most (the canaries end on their own, pressure-gen had its SIGTERM).
  void end_of_schedule(bool stopped, std::int64_t deadline_ns);

  std::vector<ChildRecord>& all() { return children_; }
  const std::vector<ChildRecord>& all() const { return children_; }

 private:
  std::string work_dir_;
  std::vector<ChildRecord> children_;
};

/// Up to `max_bytes` of the file at `path` ("" when it cannot be read): a child's output.
std::string read_output(const std::string& path, std::size_t max_bytes = 1 << 20);

}  // namespace harness::case_
