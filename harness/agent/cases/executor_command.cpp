// The agent's default executor (executor_command.hpp).
#include "harness/agent/cases/executor_command.hpp"

#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace harness::agent {

ExecutorCommand default_executor(const std::string& self_exe) {
  const fs::path lean = fs::path(self_exe).parent_path() / "harness-case";
  std::error_code ec;
  if (fs::is_regular_file(lean, ec) && ::access(lean.c_str(), X_OK) == 0)
    return {{lean.string(), "case", "run"}, "executor " + lean.string() + " case run"};
  return {{self_exe, "case", "run"},
          "executor " + self_exe + " case run (no executable " + lean.string() +
              "; the full CLI runs the same case code with a larger resident set)"};
}

}  // namespace harness::agent
