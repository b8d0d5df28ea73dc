// The `harness` executable: one root app, subcommands registered by each concern.
#include "registry.hpp"

#include "harness/cli/exit_codes.hpp"
#include "harness/cli/open_db.hpp"
#include "harness/text/shell_quote.hpp"

#include <harness/build_info.hpp>

#include <cstdio>
#include <exception>
#include <map>

namespace harness::cli {
namespace {
std::map<std::string, std::function<void(CLI::App&)>>& registry() {
  static std::map<std::string, std::function<void(CLI::App&)>> r;
  return r;
}
}  // namespace

bool register_commands(const std::string& name, std::function<void(CLI::App&)> add) {
  registry()[name] = std::move(add);
  return true;
}

int& exit_code() {
  static int code = 0;
  return code;
}

std::string& command_line() {
  static std::string line;
  return line;
}
}  // namespace harness::cli

int main(int argc, char** argv) {
  CLI::App app{
      "harness: controlled ablations of Linux memory reclaim (static zram, delayed zram "
      "activation, bounded memory.reclaim after a PSI trigger) on 1-vCPU/1-GiB VMs"};
  app.set_version_flag("--version", std::string(harness::build::kVersion) + " (source " +
                                        harness::build::kSourceCommit +
                                        (harness::build::kSourceDirty ? ", dirty)" : ")"));
  harness::cli::command_line() = harness::text::shell_join(argc, argv);
  app.require_subcommand(1);
  for (auto& [name, add] : harness::cli::registry()) add(app);
  // One exit-code table for every subcommand (exit_codes.hpp), shown under every --help.
  app.footer(harness::cli::kExitCodeTable);
  for (auto* sub : app.get_subcommands({})) {
    sub->footer(harness::cli::kExitCodeTable);
    for (auto* leaf : sub->get_subcommands({})) leaf->footer(harness::cli::kExitCodeTable);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help / --version are "parse errors" with code 0; every real one is a usage error.
    const int code = app.exit(e);
    return code == 0 ? 0 : harness::cli::kUsage;
  } catch (const std::exception& e) {
    // Could not run. Never show an SQL statement to the user (open_db.hpp).
    std::fprintf(stderr, "harness: error: %s\n", harness::cli::strip_sql(e.what()).c_str());
    return harness::cli::kError;
  }
  return harness::cli::exit_code();
}
