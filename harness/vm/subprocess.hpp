#pragma once
// Running host tools (apt-get, dpkg, mkfs.ext4, debugfs, ldd, qemu) from the VM provider.
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

/// Runs argv[0] (looked up in PATH) with the given arguments, waits, captures output.
/// `cwd` empty = current directory. Throws std::runtime_error when the program cannot
/// be started (message names it).
RunResult run(const std::vector<std::string>& argv, const std::string& cwd = "");

/// Runs argv[0] (a path, or a name looked up in PATH) with this process's stdin, stdout and
/// stderr (its output reaches the user as it is written), waits, and returns its exit status
/// (128+signal when killed by a signal; 127 when it cannot be started, as a shell would).
int run_passthrough(const std::vector<std::string>& argv);

/// Like run(), but throws std::runtime_error naming the command, its exit code and the
/// last lines of its stderr when it exits non-zero. Returns stdout.
std::string run_checked(const std::vector<std::string>& argv, const std::string& cwd = "");

/// Shell-quoted rendering of argv, for logs and error messages.
std::string render(const std::vector<std::string>& argv);

/// Starts argv[0] (looked up in PATH) in its own process group with stdout and stderr
/// appended to `log` (truncated first) and stdin from /dev/null; returns its pid without
/// waiting. Throws std::runtime_error when fork fails (exec failure: exit status 127).
int spawn_logged(const std::vector<std::string>& argv, const std::string& log);

/// True when `name` is an executable found in PATH (or an executable path).
bool have_program(const std::string& name);

}  // namespace harness::vm
