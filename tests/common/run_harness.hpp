#pragma once
// The built `harness` executable as a child process, for the tests that check what it
// prints and its exit code (exit_codes.hpp): the unit tests, and the campaign vm tests through
// campaign_vm.hpp. Header-only; needs HARNESS_BINARY_DIR; include as
// "tests/common/run_harness.hpp".
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/common/slurp.hpp"

namespace test_support {

/// <build>/harness/cli/harness.
inline std::string harness_binary() { return std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness"; }

/// What one `harness` run gave.
struct HarnessRun {
  int code = -1;    ///< exit status; -1 when it did not exit normally (killed by a signal)
  std::string out;  ///< stdout and stderr together
};

/// Whether run_harness replaces `log` or appends to it (a log shared by several runs).
enum class LogMode { Replace, Append };

/// Runs `<env>harness <args>` (args already shell-quoted; `env` empty or assignments such as
/// "XDG_CACHE_HOME=/x ", each ending in a space) through the shell with stdout and stderr to
/// `log` (replaced or appended to, per `mode`), in directory `cwd` when given (relative paths in
/// `args` resolve there), then reads the whole `log` back.
inline HarnessRun run_harness(const std::string& args, const std::filesystem::path& log,
                              LogMode mode = LogMode::Replace, const std::string& env = "",
                              const std::filesystem::path& cwd = {}) {
  const std::string redirect = mode == LogMode::Append ? " >> " : " > ";
  const std::string cd = cwd.empty() ? "" : "cd '" + cwd.string() + "' && ";
  const int st =
      std::system((cd + env + harness_binary() + " " + args + redirect + log.string() + " 2>&1").c_str());
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(log)};
}

}  // namespace test_support
