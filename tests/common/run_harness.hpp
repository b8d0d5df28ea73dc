#pragma once
// The built `harness` executable as a child process, for the unit tests that check what it
// prints and its exit code (exit_codes.hpp). Header-only; needs HARNESS_BINARY_DIR; include
// as "tests/common/run_harness.hpp".
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

/// Runs `harness <args>` (args already shell-quoted) through the shell with stdout and stderr
/// to `log` (replaced), then reads `log` back.
inline HarnessRun run_harness(const std::string& args, const std::filesystem::path& log) {
  const int st = std::system((harness_binary() + " " + args + " > " + log.string() + " 2>&1").c_str());
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(log)};
}

}  // namespace test_support
