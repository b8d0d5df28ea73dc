// Executor child process handling (see child.hpp).
#include "harness/agent/child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace harness::agent {
namespace {

// Through syscall(2): glibc 2.36's <sys/pidfd.h> declares the wrappers without C linkage.
int open_pidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }
int pidfd_signal(int pidfd, int sig) { return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0)); }

/// The agent's one fork/exec: starts argv (no shell; argv[0] looked up in PATH) with stdin
/// /dev/null, stdout on `out_fd` and stderr on `err_fd` (-1: the agent's own), leading a
/// new process group when `new_group`. argv is built before fork: no allocation between
/// fork and exec (the agent is threaded). An exec failure comes back through a CLOEXEC pipe
/// as its errno. Throws std::runtime_error naming the program when the pipe, fork or exec
/// fails (the child is then reaped).
pid_t start_process(const std::vector<std::string>& argv, int out_fd, int err_fd, bool new_group) {
  if (argv.empty()) throw std::runtime_error("cannot start an empty command");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int ep[2];
  if (pipe2(ep, O_CLOEXEC) != 0) throw std::runtime_error("cannot start '" + argv[0] + "': pipe: " + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    const int e = errno;
    close(ep[0]);
    close(ep[1]);
    throw std::runtime_error("cannot start '" + argv[0] + "': fork: " + std::strerror(e));
  }
  if (pid == 0) {
    if (new_group) setpgid(0, 0);
    const int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) dup2(nul, 0);
    if (out_fd >= 0) dup2(out_fd, 1);
    if (err_fd >= 0) dup2(err_fd, 2);
    execvp(args[0], args.data());
    const int e = errno;
    (void)!write(ep[1], &e, sizeof e);
    _exit(127);
  }
  // The parent sets the group too: signals sent before the child ran setpgid must reach it.
  if (new_group) setpgid(pid, pid);
  close(ep[1]);
  int e = 0;
  ssize_t n;
  do n = read(ep[0], &e, sizeof e);
  while (n < 0 && errno == EINTR);
  close(ep[0]);
  if (n == sizeof e) {
    wait_child(pid);
    throw std::runtime_error("cannot start '" + argv[0] + "': " + std::strerror(e));
  }
  return pid;
}

}  // namespace

ChildHandle spawn_child(const std::vector<std::string>& argv, const std::string& log_path) {
  // Opened here, close-on-exec: the child gets it as stdout and stderr only (dup2 clears the
  // flag on the copies). A log that cannot be opened leaves the agent's own streams.
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  pid_t pid = -1;
  try {
    pid = start_process(argv, log, log, /*new_group=*/true);
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

int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

CommandOutput capture_output(const std::vector<std::string>& argv, std::size_t max_bytes) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("cannot start '" + (argv.empty() ? "" : argv[0]) + "': pipe failed");
  pid_t pid = -1;
  try {
    pid = start_process(argv, p[1], -1, /*new_group=*/false);
  } catch (...) {
    close(p[0]);
    close(p[1]);
    throw;
  }
  close(p[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0 && out.size() <= max_bytes) out.append(buf, static_cast<std::size_t>(n));
  close(p[0]);
  return {wait_child(pid), std::move(out)};
}

int run_command(const std::vector<std::string>& argv) { return wait_child(start_process(argv, -1, -1, false)); }

std::vector<std::string> split_command(const std::string& cmd) {
  std::vector<std::string> r;
  std::stringstream ss(cmd);
  std::string w;
  while (ss >> w) r.push_back(w);
  return r;
}

}  // namespace harness::agent
