#pragma once
// Running host tools (apt-get, dpkg, mkfs.ext4, debugfs, ldd, qemu) from the VM provider,
// through harness::kernel::spawn (the one fork/exec).
//
// Commands are argv vectors (no shell), so paths with spaces or quotes are safe.
#include <string>
#include <vector>

namespace harness::vm {

/// Result of a finished command: exit status (128+signal when killed by a signal),
/// captured stdout and stderr (each truncated to 1 MiB).
struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs argv[0] (looked up in PATH) with the given arguments and stdin /dev/null, waits,
/// captures output (harness::kernel::run_to_exit). `cwd` empty = current directory. Throws
/// std::runtime_error when the program cannot be started (the message names it, the step
/// and the errno: Spawned::message()).
RunResult run(const std::vector<std::string>& argv, const std::string& cwd = "");

/// Runs argv[0] (a path, or a name looked up in PATH) with this process's stdin, stdout and
/// stderr (its output reaches the user as it is written), waits, and returns its exit status
/// (128+signal when killed by a signal; 127 when it cannot be started, as a shell would).
int run_passthrough(const std::vector<std::string>& argv);

/// Like run(), but throws std::runtime_error naming the command, its exit code and the
/// last lines of its stderr when it exits non-zero. Returns stdout.
std::string run_checked(const std::vector<std::string>& argv, const std::string& cwd = "");

/// Shell-quoted rendering of argv, for logs and messages.
std::string render(const std::vector<std::string>& argv);

/// Starts argv[0] (looked up in PATH) in its own process group with stdout and stderr
/// written to `log` (truncated first; one file offset for both) and stdin from /dev/null;
/// returns its pid without waiting. Throws std::runtime_error naming the program, the step
/// and the errno when it cannot be started (the log cannot be opened, fork, exec).
int spawn_logged(const std::vector<std::string>& argv, const std::string& log);

/// True when `name` is an executable found in PATH (or an executable path).
bool have_program(const std::string& name);

}  // namespace harness::vm
