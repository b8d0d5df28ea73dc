#pragma once
// Starting workload processes inside a cgroup before they run any workload code, and
// waiting for / stopping them.
//
// spawn_in_cgroup(): harness::kernel::spawn (the one fork/exec) with a held start: the
// child waits before exec while the parent writes its pid to the target cgroup.procs
// (harness::kernel::Cgroup::move_pid) and resets its oom_score_adj to 0 (it inherited the
// executor's -1000), then the child is released and execs with every signal at its default.
// An exec failure comes back as its errno, so "started" means exec succeeded. The executor
// itself never enters the cgroup.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/kernel/cgroup.hpp"

namespace harness::case_ {

/// What to run and where its output goes.
struct SpawnOptions {
  std::vector<std::string> argv;  ///< argv[0] is the executable path (no PATH lookup)
  std::string stdout_path;        ///< created/truncated; "" = /dev/null
  std::string stderr_path;        ///< created/truncated; "" = /dev/null
};

/// Spawning failed (an output file, fork, move into the cgroup, exec). what() names the
/// program, the step (the cgroup when placing failed) and the errno.
class SpawnError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Starts argv in `cg` (see file comment). Returns the child pid. Throws SpawnError; on
/// failure the child has been killed and reaped.
pid_t spawn_in_cgroup(const harness::kernel::Cgroup& cg, const SpawnOptions& opt);

/// How a child ended (waitpid status decoded).
struct ExitInfo {
  bool exited = false;   ///< normal exit
  int exit_code = 0;     ///< when exited
  int signal = 0;        ///< when killed by a signal (e.g. 9 for an OOM kill)
  std::int64_t reaped_ns = 0;  ///< CLOCK_MONOTONIC ns when reaped
};

/// Polls waitpid(WNOHANG) every 20 ms until `pid` ends or timeout_ns elapses.
/// Returns nullopt on timeout (the child still runs). Throws SpawnError on ECHILD.
std::optional<ExitInfo> wait_for_exit(pid_t pid, std::int64_t timeout_ns);

/// True when kill(pid, 0) finds the process (a zombie counts: callers reap their children
/// with wait_for_exit first, so a reaped child's pid answering means it was not stopped).
bool process_alive(pid_t pid);

}  // namespace harness::case_
