#pragma once
// Subcommand registry of the `harness` executable.
//
// Each concern adds its subcommands from its own file harness/cli/cmd_<concern>.cpp:
//
//   static const bool kQualifyRegistered = harness::cli::register_commands(
//       "qualify", [](CLI::App& app) { auto* sub = app.add_subcommand(...); ... });
//
// The flag is named after the concern, not kRegistered: a unity build compiles several
// cmd_*.cpp files as one translation unit.
// Files matching cmd_*.cpp are compiled into the executable (not a static
// library), so these static registrations are never dropped by the linker.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace harness::cli {

/// Adds subcommands to the root app. `name` only orders registration
/// (alphabetically) so that --help is stable. Returns true (for static init).
bool register_commands(const std::string& name, std::function<void(CLI::App&)> add);

/// Exit code a subcommand requests; subcommands store it here from their callback.
int& exit_code();

/// The command line of this invocation, argv shell-quoted (harness::text::shell_join), for
/// provenance headers (results/provenance.hpp). Set by main() before parsing.
std::string& command_line();

}  // namespace harness::cli
