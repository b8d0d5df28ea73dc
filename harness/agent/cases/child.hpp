#pragma once
// The executor child of the agent: one process (in its own process group) per case,
// stdout/stderr to a log file, watched by a watcher thread. Every start here goes through
// harness::kernel::spawn (the one fork/exec).
//
// Signals never reach a reused pid: the child is reaped only after the agent has stopped
// signalling it (reap_child), and until then its pid and process-group id stay reserved
// (a zombie keeps both). A pidfd, opened while the child cannot yet have been reaped,
// names this process and no later one that gets the same pid.
#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace harness::agent {

/// A started child: its pid (= its process-group id) and a pidfd (-1 when the kernel has
/// no pidfd_open, Linux < 5.3: then the unreaped-child rule alone protects the pid).
struct ChildHandle {
  pid_t pid = -1;
  int pidfd = -1;
};

/// Starts argv (no shell; argv[0] looked up in PATH) with stdin /dev/null and
/// stdout+stderr appended to `log_path`, in a new process group, and opens its pidfd.
/// Throws std::runtime_error naming the program when fork fails or exec fails (exec
/// errors are reported back through a CLOEXEC pipe, not as a silent exit 127).
ChildHandle spawn_child(const std::vector<std::string>& argv, const std::string& log_path);

/// Waits at most `timeout` for the child to exit, without reaping it, or for one of `also`
/// to become readable (their revents are set). True once the child has exited (it is then a
/// zombie until reap_child); false on a timeout, a readable `also`, or EINTR. A negative
/// `timeout` waits without limit when the child has a pidfd; without one, the child is
/// looked at every 100 ms (there is no exit notice to wait on).
bool wait_exit_or_readable(const ChildHandle& child, std::chrono::milliseconds timeout, std::vector<pollfd>& also);

/// Reaps the exited (or exiting) child, closes its pidfd and clears `child`. Returns its
/// exit code, or 128+signal when a signal ended it, or -1 when waitpid failed.
int reap_child(ChildHandle& child);

/// Sends `sig` to the child's process group; when that group is gone (the child moved to
/// another group), to the child itself through its pidfd. Only valid before reap_child.
void signal_child(const ChildHandle& child, int sig);

/// Blocks until `pid` exits and reaps it; returns its exit code, or 128+signal when killed
/// (for short helper commands such as --qualify-cmd).
int wait_child(pid_t pid);

/// What a command run by capture_output ended with.
struct CommandOutput {
  int exit_code = -1;  ///< as wait_child: the exit code, 128+signal, -1 when waitpid failed
  std::string out;     ///< its stdout, at most max_bytes + one read's worth
};

/// Runs `argv` (no shell; argv[0] looked up in PATH; stdin /dev/null) with its stdout on a
/// pipe and waits for it: its exit code and what it printed, at most `max_bytes` + 1 bytes
/// of it (so a longer output is never taken for a whole one; the rest is read and dropped,
/// so the child never blocks on a full pipe). Throws std::runtime_error naming the program when it cannot be started
/// (pipe, fork or exec: the same start as spawn_child's) (for --qualify-cmd).
CommandOutput capture_output(const std::vector<std::string>& argv, std::size_t max_bytes);

/// Runs `argv` (no shell; argv[0] looked up in PATH; stdin /dev/null, stdout and stderr the
/// agent's) and waits for it: its exit code (as wait_child). Throws std::runtime_error
/// naming the program when it cannot be started (for the reboot commands).
int run_command(const std::vector<std::string>& argv);

/// Splits a command line on whitespace into argv (no quoting rules: for --executor and
/// --qualify-cmd overrides, which take plain paths and flags).
std::vector<std::string> split_command(const std::string& cmd);

}  // namespace harness::agent
