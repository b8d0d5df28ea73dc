#pragma once
// The command-line frame shared by the workload executables (canary-compute, canary-sqlite,
// pressure-gen): flag parsing and the mapping of errors to their exit codes, 0 ok, 1 run
// error, 2 bad arguments, the message naming the flag (ours; canaries/README.md). Header-only.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

namespace canaries {

/// Parses `argv` into `app`. Returns the code main() must exit with now: 0 after --help (the
/// help is printed), 2 for a bad or missing flag (CLI11 has printed the error naming it);
/// std::nullopt when parsing succeeded and main() goes on.
inline std::optional<int> parse_flags(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help (rc 0) or the error naming the flag
    return rc == 0 ? 0 : 2;
  }
  return std::nullopt;
}

/// Returns body() (an exit code); what it throws becomes "<who>: <what>" on stderr and exit 2
/// for std::invalid_argument (a flag value that is out of range or inconsistent), exit 1 for
/// any other std::exception (a run error).
template <class Body>
int run_main(const std::string& who, Body&& body) {
  try {
    return body();
  } catch (const std::invalid_argument& e) {
    std::cerr << who << ": " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << who << ": " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace canaries
