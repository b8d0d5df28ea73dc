// Process placement into a cgroup before exec (docs/DESIGN.md "The case"): the
// child joins its cgroup before exec, so none of its memory is charged elsewhere.
#include "harness/case/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "harness/kernel/procfs.hpp"

namespace harness::case_ {

namespace {
int open_out(const std::string& path) {
  int fd = ::open(path.empty() ? "/dev/null" : path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw SpawnError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  return fd;
}
void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}
}  // namespace

pid_t spawn_in_cgroup(const harness::kernel::Cgroup& cg, const SpawnOptions& opt) {
  if (opt.argv.empty()) throw SpawnError("spawn_in_cgroup: empty argv");
  std::vector<char*> argv;
  for (const auto& a : opt.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int out = open_out(opt.stdout_path);
  int err = open_out(opt.stderr_path);
  int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int go[2] = {-1, -1}, status[2] = {-1, -1};
  if (::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(status, O_CLOEXEC) != 0) {
    int e = errno;
    close_fd(out), close_fd(err), close_fd(in), close_fd(go[0]), close_fd(go[1]);
    throw SpawnError(fmt::format("pipe: {}", std::strerror(e)));
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    close_fd(out), close_fd(err), close_fd(in);
    for (int* p : {go, status}) close_fd(p[0]), close_fd(p[1]);
    throw SpawnError(fmt::format("fork for {}: {}", opt.argv[0], std::strerror(e)));
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    char c;
    ssize_t n;
    do n = ::read(go[0], &c, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) ::_exit(127);  // parent gave up (placement failed)
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(argv[0], argv.data());
    int e = errno;
    (void)!::write(status[1], &e, sizeof e);
    ::_exit(127);
  }
  close_fd(go[0]);
  close_fd(status[1]);
  close_fd(out), close_fd(err), close_fd(in);
  auto fail = [&](const std::string& why) -> SpawnError {
    ::kill(pid, SIGKILL);
    int st;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    close_fd(go[1]);
    close_fd(status[0]);
    return SpawnError(why);
  };
  auto moved = cg.move_pid(pid);
  if (!moved.ok())
    throw fail(fmt::format("cannot place {} (pid {}) into {}: {}", opt.argv[0], pid, cg.dir(), moved.message()));
  // The child inherited the executor's oom_score_adj (-1000): make it killable again.
  auto adj = harness::kernel::write_oom_score_adj(cg.fs(), 0, pid);
  if (!adj.ok()) throw fail(fmt::format("cannot reset oom_score_adj of {} (pid {}): {}", opt.argv[0], pid, adj.message()));
  if (::write(go[1], "g", 1) != 1) throw fail(fmt::format("cannot release {} (pid {})", opt.argv[0], pid));
  close_fd(go[1]);
  int e = 0;
  ssize_t n;
  do n = ::read(status[0], &e, sizeof e);
  while (n < 0 && errno == EINTR);
  close_fd(status[0]);
  if (n == sizeof e) {
    int st;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    throw SpawnError(fmt::format("cannot exec {}: {}", opt.argv[0], std::strerror(e)));
  }
  return pid;
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
