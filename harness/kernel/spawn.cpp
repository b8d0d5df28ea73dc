// The one fork/exec (see spawn.hpp).
#include "harness/kernel/spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace harness::kernel {
namespace {

/// What the child writes on the status pipe when a step fails (one write, atomic).
struct ChildFailure {
  int step;
  int error;
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

/// `fd` moved to a number above 2 (close-on-exec), so that no dup2 onto stdin, stdout or
/// stderr in the child overwrites a descriptor it still has to read from.
int above_stdio(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

/// Everything the child uses, built before fork; the destructor closes what is still open.
struct Prepared {
  std::vector<char*> argv, envp;
  std::vector<std::string> candidates;  // full paths to try, in order
  std::vector<const char*> candidate_ptrs;
  int child_end[3] = {-1, -1, -1};   // dup2'ed onto 0, 1, 2 in the child; -1 = inherit
  int parent_end[3] = {-1, -1, -1};  // the caller's ends of Pipe streams
  int status[2] = {-1, -1};          // child -> parent: ChildFailure, or end of file at exec
  int gate[2] = {-1, -1};            // parent -> child: one byte releases a held child
  bool stderr_is_stdout = false;     // dup2(1, 2) once stdout is in place
  ~Prepared() {
    for (int& fd : child_end) close_fd(fd);
    for (int& fd : parent_end) close_fd(fd);
    for (int& fd : status) close_fd(fd);
    for (int& fd : gate) close_fd(fd);
  }
};

/// The directories of PATH as execvp(3) uses them (empty entry = current directory).
std::vector<std::string> path_candidates(const std::string& name) {
  if (name.find('/') != std::string::npos) return {name};
  const char* path = std::getenv("PATH");
  const std::string p = path ? path : "/bin:/usr/bin";
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t colon = p.find(':', start);
    const std::string dir = p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    out.push_back(dir.empty() ? name : dir + "/" + name);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

/// Opens the child's end of one stream (`which`: 0, 1, 2). Returns 0, or the errno with
/// `detail` naming what failed to open.
int prepare_stream(const ChildStream& s, int which, Prepared& p, SpawnStep& step, std::string& detail) {
  int fd = -1;
  switch (s.kind) {
    case ChildStream::Kind::Inherit:
      return 0;
    case ChildStream::Kind::Stdout:
      if (which != 2) {
        step = SpawnStep::Redirect, detail = "of stdin or stdout to itself (same_as_stdout is for stderr)";
        return EINVAL;
      }
      p.stderr_is_stdout = true;
      return 0;
    case ChildStream::Kind::Null:
      fd = ::open("/dev/null", (which == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
      step = SpawnStep::Open, detail = "/dev/null";
      break;
    case ChildStream::Kind::File:
      fd = ::open(s.path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (s.append ? O_APPEND : O_TRUNC), s.mode);
      step = SpawnStep::Open, detail = s.path;
      break;
    case ChildStream::Kind::Fd:
      fd = s.fd < 0 ? -1 : ::fcntl(s.fd, F_DUPFD_CLOEXEC, 3);  // our own copy above 2
      step = SpawnStep::Redirect, detail = "descriptor " + std::to_string(s.fd);
      if (s.fd < 0) errno = EBADF;
      break;
    case ChildStream::Kind::Pipe: {
      int fds[2];
      step = SpawnStep::Pipe, detail.clear();
      if (::pipe2(fds, O_CLOEXEC) != 0) return errno;
      const bool child_reads = which == 0;
      p.parent_end[which] = child_reads ? fds[1] : fds[0];
      fd = child_reads ? fds[0] : fds[1];
      break;
    }
  }
  if (fd < 0) return errno;
  p.child_end[which] = above_stdio(fd);
  if (p.child_end[which] < 0) return errno;
  step = SpawnStep::None, detail.clear();
  return 0;
}

/// Builds argv, envp, the PATH candidates and the descriptors. Returns the failed step
/// (None when everything is ready) with its errno and detail in `out`.
SpawnStep prepare(const SpawnSpec& spec, std::vector<std::string>& env_copy, Prepared& p, Spawned& out) {
  if (spec.argv.empty()) {
    out.error = EINVAL;
    return SpawnStep::Argv;
  }
  for (const auto& a : spec.argv) p.argv.push_back(const_cast<char*>(a.c_str()));
  p.argv.push_back(nullptr);
  if (spec.env) {
    env_copy = *spec.env;
    for (auto& e : env_copy) p.envp.push_back(e.data());
    p.envp.push_back(nullptr);
  }
  p.candidates = spec.search_path ? path_candidates(spec.argv[0]) : std::vector<std::string>{spec.argv[0]};
  for (const auto& c : p.candidates) p.candidate_ptrs.push_back(c.c_str());
  const ChildStream* streams[3] = {&spec.stdin_to, &spec.stdout_to, &spec.stderr_to};
  for (int i = 0; i < 3; ++i) {
    SpawnStep step = SpawnStep::None;
    if (const int e = prepare_stream(*streams[i], i, p, step, out.detail); e != 0) {
      out.error = e;
      return step;
    }
  }
  if (::pipe2(p.status, O_CLOEXEC) != 0 ||
      (spec.before_exec && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p.gate) != 0)) {
    out.error = errno;
    return SpawnStep::Pipe;
  }
  // The child's ends of both, above 2: its dup2 onto 0-2 must not close them.
  p.status[1] = above_stdio(p.status[1]);
  if (p.gate[0] >= 0) p.gate[0] = above_stdio(p.gate[0]);
  if (p.status[1] < 0 || (spec.before_exec && p.gate[0] < 0)) {
    out.error = errno;
    return SpawnStep::Pipe;
  }
  return SpawnStep::None;
}

/// Reports `step` and errno to the parent and ends the child. Async-signal-safe.
[[noreturn]] void child_fail(int status_fd, SpawnStep step, int error) {
  const ChildFailure f{static_cast<int>(step), error};
  (void)!::write(status_fd, &f, sizeof f);
  ::_exit(127);
}

/// The child between fork and exec: async-signal-safe calls only, no allocation.
[[noreturn]] void run_child(const SpawnSpec& spec, const Prepared& p, const sigset_t& caller_mask) {
  const int st = p.status[1];
  if (spec.group == ChildGroup::NewGroup && ::setpgid(0, 0) != 0) child_fail(st, SpawnStep::Group, errno);
  if (spec.group == ChildGroup::NewSession && ::setsid() < 0) child_fail(st, SpawnStep::Group, errno);
  for (int i = 0; i < 3; ++i)
    if (p.child_end[i] >= 0 && ::dup2(p.child_end[i], i) < 0) child_fail(st, SpawnStep::Redirect, errno);
  if (p.stderr_is_stdout && ::dup2(1, 2) < 0) child_fail(st, SpawnStep::Redirect, errno);
  for (int fd : spec.keep_fds)
    if (::fcntl(fd, F_SETFD, 0) != 0) child_fail(st, SpawnStep::Redirect, errno);
  if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) child_fail(st, SpawnStep::Chdir, errno);
  if (p.gate[0] >= 0) {
    ::close(p.gate[1]);  // so that the parent's end closing (it died) reads as end of file here
    char c = 0;
    ssize_t n;
    do n = ::read(p.gate[0], &c, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) ::_exit(127);  // the parent gave up on this child (it kills it)
  }
  if (spec.default_signals) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);  // SIGKILL/SIGSTOP: EINVAL, ignored
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
  } else {
    ::sigprocmask(SIG_SETMASK, &caller_mask, nullptr);
  }
  char* const* envp = p.envp.empty() ? environ : p.envp.data();
  int error = ENOENT;
  bool denied = false;
  for (const char* file : p.candidate_ptrs) {
    ::execve(file, p.argv.data(), envp);
    error = errno;
    if (error == EACCES) denied = true;
    // As execvp: these mean "not here"; anything else (ENOEXEC, E2BIG, ENOMEM...) stops.
    if (error != ENOENT && error != ENOTDIR && error != EACCES && error != ESTALE && error != ENODEV &&
        error != ETIMEDOUT)
      break;
  }
  child_fail(st, SpawnStep::Exec, denied && (error == ENOENT || error == ENOTDIR) ? EACCES : error);
}

/// Kills and reaps a child the parent gives up on.
void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

const char* step_name(SpawnStep s) {
  switch (s) {
    case SpawnStep::None: return "started";
    case SpawnStep::Argv: return "empty command";
    case SpawnStep::Open: return "open";
    case SpawnStep::Pipe: return "pipe";
    case SpawnStep::Fork: return "fork";
    case SpawnStep::Group: return "new process group";
    case SpawnStep::Redirect: return "redirect";
    case SpawnStep::Chdir: return "chdir";
    case SpawnStep::Released: return "ended before it was released";
    case SpawnStep::Exec: return "exec";
  }
  return "?";
}

/// Reads the child's failure record from the status pipe (blocking until the child execs or
/// ends). True when the child reported a failed step (then it is reaped and `out` has it).
bool read_failure(pid_t pid, Prepared& p, Spawned& out, SpawnStep& step) {
  ChildFailure f{};
  ssize_t n;
  do n = ::read(p.status[0], &f, sizeof f);
  while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof f)) return false;  // end of file: exec closed the pipe
  kill_and_reap(pid);  // it has _exit()ed already: this only reaps it
  out.error = f.error;
  step = static_cast<SpawnStep>(f.step);
  return true;
}

/// Runs before_exec and releases the held child. False (the child reaped, `step` and `out`
/// set) when the child cannot be released. A throwing before_exec kills and reaps the child
/// and rethrows, unless the child had already failed a step of its own (that is returned).
bool release_held(const SpawnSpec& spec, pid_t pid, Prepared& p, Spawned& out, SpawnStep& step) {
  close_fd(p.gate[0]);
  try {
    spec.before_exec(pid);
  } catch (...) {
    pollfd ready{p.status[0], POLLIN, 0};
    if (::poll(&ready, 1, 0) == 1 && read_failure(pid, p, out, step)) return false;
    kill_and_reap(pid);
    throw;
  }
  const char go = 'g';
  const bool sent = ::send(p.gate[1], &go, 1, MSG_NOSIGNAL) == 1;
  close_fd(p.gate[1]);
  if (sent) return true;
  if (read_failure(pid, p, out, step)) return false;  // it ended: why, if it said
  kill_and_reap(pid);
  out.error = ECHILD, step = SpawnStep::Released;
  return false;
}

/// The parent after fork: the held child released (before_exec), then the status pipe read.
/// Returns the failed step (None: exec succeeded) with its errno in `out`.
SpawnStep await_exec(const SpawnSpec& spec, pid_t pid, Prepared& p, Spawned& out) {
  SpawnStep step = SpawnStep::None;
  if (spec.before_exec && !release_held(spec, pid, p, out, step)) return step;
  read_failure(pid, p, out, step);
  return step;
}

}  // namespace

std::string Spawned::message() const {
  if (ok()) return "";
  std::string m = "cannot start '" + program + "': " + step_name(failed);
  if (!detail.empty()) m += " " + detail;
  if (error != 0) m += std::string(": ") + std::strerror(error);
  return m;
}

Spawned spawn(const SpawnSpec& spec) {
  Spawned out;
  out.program = spec.argv.empty() ? std::string() : spec.argv[0];
  Prepared p;
  std::vector<std::string> env_copy;
  if ((out.failed = prepare(spec, env_copy, p, out)) != SpawnStep::None) return out;
  // Signals stay blocked from fork until the child has set its own mask: no handler of the
  // caller runs in the child.
  sigset_t all, caller_mask;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &caller_mask);
  const pid_t pid = ::fork();
  if (pid == 0) run_child(spec, p, caller_mask);
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &caller_mask, nullptr);
  if (pid < 0) {
    out.failed = SpawnStep::Fork, out.error = fork_errno;
    return out;
  }
  // The parent sets the group too: a signal it sends to the group at once must reach it.
  if (spec.group == ChildGroup::NewGroup) ::setpgid(pid, pid);
  for (int& fd : p.child_end) close_fd(fd);
  close_fd(p.status[1]);
  if ((out.failed = await_exec(spec, pid, p, out)) != SpawnStep::None) {
    if (out.failed == SpawnStep::Chdir) out.detail = spec.cwd;
    return out;
  }
  out.pid = pid;
  out.error = 0, out.detail.clear();
  std::swap(out.stdin_fd, p.parent_end[0]);
  std::swap(out.stdout_fd, p.parent_end[1]);
  std::swap(out.stderr_fd, p.parent_end[2]);
  return out;
}

int exit_code_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return exit_code_of(status);
}

RunToExit run_to_exit(const SpawnSpec& spec, std::size_t max_bytes) {
  RunToExit r;
  r.start = spawn(spec);
  if (!r.start.ok()) return r;
  close_fd(r.start.stdin_fd);
  pollfd fds[2] = {{r.start.stdout_fd, POLLIN, 0}, {r.start.stderr_fd, POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  char buf[65536];
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    if (::poll(fds, 2, -1) < 0) {  // a negative fd is skipped by poll
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close_fd(fds[i].fd);
        continue;
      }
      const std::size_t room = max_bytes - std::min(max_bytes, sinks[i]->size());
      const std::size_t got = static_cast<std::size_t>(n);
      sinks[i]->append(buf, std::min(room, got));
      if (got > room) r.truncated = true;
    }
  }
  for (auto& f : fds) close_fd(f.fd);
  r.start.stdout_fd = r.start.stderr_fd = -1;
  r.exit_code = wait_exit_code(r.start.pid);
  return r;
}

}  // namespace harness::kernel
