#pragma once
// The harness's one fork/exec (issue 48 item 5): every program the harness starts, in the
// guest (the agent's executor and commands, the executor's workloads) and on the
// workstation (host tools, qemu, ssh tunnels, the figures script), is started by spawn().
//
// Everything the child needs (argv, envp, the PATH candidates, the files and pipes of its
// standard streams) is built in the parent before fork: between fork and exec the child
// makes only async-signal-safe system calls and allocates nothing, so a threaded caller
// (the agent, the runner) is safe. A close-on-exec pipe carries a failure of any step in
// the child (chdir, dup2, exec) back to the parent as its step and errno: a program that
// cannot be started is a returned value (Spawned::ok() false, the child reaped), never a
// child that goes on running the caller's code or an exit status 127 to guess from.
// Errors follow docs/DESIGN.md "Errors": a start that fails is a value; only a throwing
// `before_exec` of the caller propagates (its own exception).
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace harness::kernel {

/// Where one standard stream (stdin, stdout or stderr) of the child goes.
struct ChildStream {
  enum class Kind {
    Inherit,  ///< the caller's own stream
    Null,     ///< /dev/null
    Fd,       ///< `fd` (the caller's descriptor, still the caller's to close)
    File,     ///< `path`, opened by spawn() before fork (created with `mode`)
    Pipe,     ///< a new pipe; the caller's end is in Spawned (stdin_fd / stdout_fd / stderr_fd)
    Stdout,   ///< stderr only: the same open file as stdout (one offset: a log of both in order)
  };
  Kind kind = Kind::Inherit;
  int fd = -1;
  std::string path;
  bool append = false;  ///< File: O_APPEND; otherwise the file is truncated
  mode_t mode = 0644;   ///< File: permission bits when spawn() creates it

  static ChildStream inherit() { return {}; }
  static ChildStream null() { return of(Kind::Null); }
  static ChildStream pipe() { return of(Kind::Pipe); }
  static ChildStream same_as_stdout() { return of(Kind::Stdout); }
  static ChildStream to_fd(int fd) {
    ChildStream s = of(Kind::Fd);
    s.fd = fd;
    return s;
  }
  static ChildStream file(std::string path, bool append = false, mode_t mode = 0644) {
    ChildStream s = of(Kind::File);
    s.path = std::move(path);
    s.append = append;
    s.mode = mode;
    return s;
  }

 private:
  static ChildStream of(Kind k) {
    ChildStream s;
    s.kind = k;
    return s;
  }
};

/// The process group the child is in.
enum class ChildGroup {
  Inherit,     ///< the caller's
  NewGroup,    ///< a new group led by the child (setpgid in child and parent: no race with a
               ///< signal the caller sends to the group at once)
  NewSession,  ///< a new session (setsid): also no controlling terminal
};

/// What to start and how.
struct SpawnSpec {
  std::vector<std::string> argv;  ///< argv[0] is the program; must not be empty
  /// argv[0] without a '/' is looked up in this process's PATH ("/bin:/usr/bin" when unset)
  /// as execvp(3) does (ENOENT, ENOTDIR, EACCES... go on to the next directory; EACCES is
  /// reported when nothing else was found). false: argv[0] is a path.
  bool search_path = true;
  /// The child's environment, "NAME=value" each; nullopt = this process's environment.
  std::optional<std::vector<std::string>> env;
  std::string cwd;  ///< the child's working directory; empty = the caller's
  ChildStream stdin_to = ChildStream::inherit();
  ChildStream stdout_to = ChildStream::inherit();
  ChildStream stderr_to = ChildStream::inherit();
  ChildGroup group = ChildGroup::Inherit;
  /// Descriptors of the caller that the program keeps under the same number (their
  /// close-on-exec flag is cleared in the child only). Every other descriptor the caller
  /// opened with O_CLOEXEC stays closed in the program.
  std::vector<int> keep_fds;
  /// The program starts with an empty signal mask and every signal's disposition at its
  /// default (an ignored SIGPIPE or SIGINT of the caller is not inherited). false: the
  /// caller's mask and ignored signals carry over, as fork/exec does.
  bool default_signals = false;
  /// When set, the child stops before exec (after its streams, group and directory are set)
  /// until this returns in the parent, which gets the child's pid: to place it in a cgroup
  /// before it runs any code of its own. If it throws, the child is killed (SIGKILL) and
  /// reaped, and the exception propagates from spawn().
  std::function<void(pid_t)> before_exec;
};

/// The step at which a start failed.
enum class SpawnStep {
  None,      ///< started
  Argv,      ///< empty argv (error EINVAL)
  Open,      ///< opening a File stream or /dev/null (parent)
  Pipe,      ///< pipe or socketpair (parent)
  Fork,      ///< fork (parent)
  Group,     ///< setpgid / setsid (child)
  Redirect,  ///< dup2 of a stream or clearing close-on-exec of a keep_fd (child)
  Chdir,     ///< chdir to SpawnSpec::cwd (child)
  Released,  ///< the child ended before before_exec released it (error ECHILD)
  Exec,      ///< execve (child; the last directory's errno, or EACCES, with search_path)
};

/// The outcome of spawn(). When ok(): the child's pid (the caller waits for it: see
/// wait_exit_code) and the caller's ends of its Pipe streams (close-on-exec; -1 for a stream
/// that is not a Pipe; the caller closes them). When !ok(): pid -1, no descriptor left open,
/// no child left (it has been reaped), and which step failed with its errno.
struct Spawned {
  pid_t pid = -1;
  int stdin_fd = -1;   ///< write end of the child's stdin pipe
  int stdout_fd = -1;  ///< read end of the child's stdout pipe
  int stderr_fd = -1;  ///< read end of the child's stderr pipe
  SpawnStep failed = SpawnStep::None;
  int error = 0;        ///< errno of the failed step
  std::string program;  ///< argv[0]
  std::string detail;   ///< the file (Open) or directory (Chdir) of the failed step, else empty

  bool ok() const { return failed == SpawnStep::None; }
  /// "cannot start 'PROG': exec: No such file or directory", "cannot start 'PROG': chdir
  /// /x: ..."; empty when ok().
  std::string message() const;
};

/// Starts `spec` (file comment). Never throws for a start that fails (that is the returned
/// value); throws only what `spec.before_exec` throws, and std::bad_alloc.
Spawned spawn(const SpawnSpec& spec);

/// The exit code of a waitpid(2) status: the code of a normal exit, 128+signal when a signal
/// ended the process (as a shell reports it).
int exit_code_of(int wait_status);

/// Waits for `pid` (EINTR retried) and reaps it: exit_code_of its status, or -1 when
/// waitpid fails (not a child of this process, or already reaped).
int wait_exit_code(pid_t pid);

/// What run_to_exit() ended with.
struct RunToExit {
  Spawned start;       ///< !start.ok(): not started (exit_code -1, nothing read)
  int exit_code = -1;  ///< as wait_exit_code
  std::string out;     ///< the child's stdout when spec.stdout_to is a Pipe, at most max_bytes
  std::string err;     ///< the child's stderr when spec.stderr_to is a Pipe, at most max_bytes
  bool truncated = false;  ///< either stream said more than max_bytes (the rest was dropped)
};

/// Starts `spec`, reads its stdout and stderr Pipes (either or both) until both end, keeping
/// at most `max_bytes` of each (the rest is read and dropped, so the child never blocks on a
/// full pipe), and waits for it. A Pipe stdin is closed at once (the program reads end of
/// file). Throws as spawn().
RunToExit run_to_exit(const SpawnSpec& spec, std::size_t max_bytes);

}  // namespace harness::kernel
