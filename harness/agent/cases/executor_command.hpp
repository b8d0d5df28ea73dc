#pragma once
// Which program the agent starts for a case (the executor). The lean `harness-case`
// executable next to the agent's own binary is preferred: it is the same case code as
// `harness case run` but links only what a case needs (SQLite, zlib, fmt), so its resident
// set in the guest is the case's, not the whole CLI's (footprint; docs/DESIGN.md
// "Harness footprint in the guest").
#include <string>
#include <vector>

namespace harness::agent {

/// The executor's command prefix and why it was chosen.
struct ExecutorCommand {
  std::vector<std::string> argv;  ///< e.g. {"/opt/harness/bin/harness-case", "case", "run"}
  std::string why;                ///< one line for the agent's start-up log
};

/// The default executor of an agent whose executable is `self_exe` (an absolute path):
/// `<dir of self_exe>/harness-case case run` when that file is a regular executable file,
/// otherwise `<self_exe> case run` (the full CLI, same code; `why` then names the missing
/// file so that a package or image without harness-case is visible in the agent's log).
/// Never throws.
ExecutorCommand default_executor(const std::string& self_exe);

}  // namespace harness::agent
