// Process placement into a cgroup before exec (docs/DESIGN.md "The case"): the
// child joins its cgroup before exec, so none of its memory is charged elsewhere.
#include "harness/case/host/process.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "harness/kernel/procfs.hpp"
#include "harness/kernel/spawn.hpp"

namespace harness::case_ {

pid_t spawn_in_cgroup(const harness::kernel::Cgroup& cg, const SpawnOptions& opt) {
  namespace hk = harness::kernel;
  if (opt.argv.empty()) throw SpawnError("spawn_in_cgroup: empty argv");
  const auto out_to = [](const std::string& path) { return path.empty() ? hk::ChildStream::null() : hk::ChildStream::file(path); };
  hk::SpawnSpec spec;
  spec.argv = opt.argv;
  spec.search_path = false;
  spec.stdin_to = hk::ChildStream::null();
  spec.stdout_to = out_to(opt.stdout_path);
  spec.stderr_to = out_to(opt.stderr_path);
  spec.default_signals = true;  // the executor's blocked and ignored signals are not the workload's
  spec.before_exec = [&](pid_t pid) {
    auto moved = cg.move_pid(pid);
    if (!moved.ok())
      throw SpawnError(fmt::format("cannot place {} (pid {}) into {}: {}", opt.argv[0], pid, cg.dir(), moved.message()));
    // The child inherited the executor's oom_score_adj (-1000): make it killable again.
    auto adj = harness::kernel::write_oom_score_adj(cg.fs(), 0, pid);
    if (!adj.ok()) throw SpawnError(fmt::format("cannot reset oom_score_adj of {} (pid {}): {}", opt.argv[0], pid, adj.message()));
  };
  const hk::Spawned started = hk::spawn(spec);
  if (started.failed == hk::SpawnStep::Exec)
    throw SpawnError(fmt::format("cannot exec {}: {}", opt.argv[0], std::strerror(started.error)));
  if (!started.ok()) throw SpawnError(started.message());
  return started.pid;
}

std::optional<ExitInfo> wait_for_exit(pid_t pid, std::int64_t timeout_ns) {
  const auto start = harness::kernel::monotonic_ns();
  for (;;) {
    int st = 0;
    pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) {
      ExitInfo x;
      x.reaped_ns = harness::kernel::monotonic_ns();
      if (WIFEXITED(st)) x.exited = true, x.exit_code = WEXITSTATUS(st);
      else if (WIFSIGNALED(st)) x.signal = WTERMSIG(st);
      return x;
    }
    if (r < 0 && errno != EINTR) throw SpawnError(fmt::format("waitpid({}): {}", pid, std::strerror(errno)));
    if (harness::kernel::monotonic_ns() - start >= timeout_ns) return std::nullopt;
    struct timespec ts{0, 20'000'000};
    ::nanosleep(&ts, nullptr);
  }
}

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace harness::case_
