// Executor child process handling (see child.hpp).
#include "harness/agent/cases/child.hpp"

#include "harness/kernel/spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace harness::agent {
namespace {

// Through syscall(2): glibc 2.36's <sys/pidfd.h> declares the wrappers without C linkage.
int open_pidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }
int pidfd_signal(int pidfd, int sig) { return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0)); }

/// The agent's starts, all through harness::kernel::spawn: argv (no shell; argv[0] looked up
/// in PATH) with stdin /dev/null and stdout / stderr as given. Throws std::runtime_error naming
/// the program, the step and the errno when it cannot be started (the child is then reaped).
harness::kernel::Spawned start_process(harness::kernel::SpawnSpec spec) {
  spec.stdin_to = harness::kernel::ChildStream::null();
  auto started = harness::kernel::spawn(spec);
  if (!started.ok()) throw std::runtime_error(started.message());
  return started;
}

/// A spec that runs argv with the caller's streams, group, directory and environment.
harness::kernel::SpawnSpec command(const std::vector<std::string>& argv) {
  harness::kernel::SpawnSpec spec;
  spec.argv = argv;
  return spec;
}

}  // namespace

ChildHandle spawn_child(const std::vector<std::string>& argv, const std::string& log_path) {
  namespace hk = harness::kernel;
  // Opened here, close-on-exec: the child gets it as stdout and stderr only. A log that
  // cannot be opened leaves the agent's own streams.
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  hk::SpawnSpec spec = command(argv);
  if (log >= 0) {
    spec.stdout_to = hk::ChildStream::to_fd(log);
    spec.stderr_to = hk::ChildStream::same_as_stdout();
  }
  spec.group = hk::ChildGroup::NewGroup;
  pid_t pid = -1;
  try {
    pid = start_process(spec).pid;
  } catch (...) {
    if (log >= 0) close(log);
    throw;
  }
  if (log >= 0) close(log);
  ChildHandle h;
  h.pid = pid;
  h.pidfd = open_pidfd(pid);  // the child is unreaped: this names it, whatever happens later
  if (h.pidfd >= 0) fcntl(h.pidfd, F_SETFD, FD_CLOEXEC);
  return h;
}

bool wait_exit_or_readable(const ChildHandle& child, std::chrono::milliseconds timeout, std::vector<pollfd>& also) {
  if (child.pid <= 0) return true;
  for (auto& p : also) p.revents = 0;
  int ms = timeout.count() < 0 ? -1 : static_cast<int>(std::min<long long>(timeout.count(), 1 << 30));
  if (child.pidfd < 0 && (ms < 0 || ms > 100)) ms = 100;  // no exit notice: look again soon
  std::vector<pollfd> fds;
  fds.reserve(also.size() + 1);
  if (child.pidfd >= 0) fds.push_back({child.pidfd, POLLIN, 0});
  fds.insert(fds.end(), also.begin(), also.end());
  const int r = fds.empty() ? (std::this_thread::sleep_for(std::chrono::milliseconds(ms)), 0)
                            : ::poll(fds.data(), static_cast<nfds_t>(fds.size()), ms);
  if (r < 0) return false;  // EINTR: the caller loops
  const std::size_t first = child.pidfd >= 0 ? 1 : 0;
  for (std::size_t i = 0; i < also.size(); ++i) also[i].revents = fds[first + i].revents;
  if (child.pidfd >= 0 && !(fds[0].revents & POLLIN)) return false;
  siginfo_t si{};
  si.si_pid = 0;
  if (::waitid(P_PID, static_cast<id_t>(child.pid), &si, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
  return si.si_pid == child.pid;
}

int reap_child(ChildHandle& child) {
  int status = 0;
  pid_t r;
  do {
    r = waitpid(child.pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  if (child.pidfd >= 0) close(child.pidfd);
  child = ChildHandle{};
  if (r < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void signal_child(const ChildHandle& child, int sig) {
  if (child.pid <= 0) return;
  if (::kill(-child.pid, sig) == 0 || errno != ESRCH) return;
  if (child.pidfd >= 0)
    pidfd_signal(child.pidfd, sig);
  else
    ::kill(child.pid, sig);  // unreaped (child.hpp): cannot be another process
}

int wait_child(pid_t pid) { return harness::kernel::wait_exit_code(pid); }

CommandOutput capture_output(const std::vector<std::string>& argv, std::size_t max_bytes) {
  harness::kernel::SpawnSpec spec = command(argv);
  spec.stdin_to = harness::kernel::ChildStream::null();
  spec.stdout_to = harness::kernel::ChildStream::pipe();
  // One byte over the limit kept: an output longer than max_bytes never reads as a whole one.
  auto done = harness::kernel::run_to_exit(spec, max_bytes + 1);
  if (!done.start.ok()) throw std::runtime_error(done.start.message());
  return {done.exit_code, std::move(done.out)};
}

int run_command(const std::vector<std::string>& argv) { return wait_child(start_process(command(argv)).pid); }

std::vector<std::string> split_command(const std::string& cmd) {
  std::vector<std::string> r;
  std::stringstream ss(cmd);
  std::string w;
  while (ss >> w) r.push_back(w);
  return r;
}

}  // namespace harness::agent
