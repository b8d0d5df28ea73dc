#pragma once
// The executor child of the agent: one process (in its own process group) per case,
// stdout/stderr to a log file, waited for by a watcher thread.
#include <sys/types.h>

#include <string>
#include <vector>

namespace harness::agent {

/// Starts argv (no shell; argv[0] looked up in PATH) with stdin /dev/null and
/// stdout+stderr appended to `log_path`, in a new process group. Returns the pid.
/// Throws std::runtime_error naming the program when fork fails or exec fails (exec
/// errors are reported back through a CLOEXEC pipe, not as a silent exit 127).
pid_t spawn_child(const std::vector<std::string>& argv, const std::string& log_path);

/// Blocks until `pid` exits; returns its exit code, or 128+signal when killed.
int wait_child(pid_t pid);

/// Sends `sig` to the child's process group (falls back to the pid alone).
void signal_child(pid_t pid, int sig);

/// Splits a command line on whitespace into argv (no quoting rules: for --executor and
/// --qualify-cmd overrides, which take plain paths and flags).
std::vector<std::string> split_command(const std::string& cmd);

}  // namespace harness::agent
