#pragma once
// The whole content of a file, for every test that reads one back (bundles, logs, traces,
// captured output). Header-only; include as "tests/common/slurp.hpp".
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace test_support {

/// The bytes of `p` as a string; "" when it is missing or unreadable (the caller's assertion
/// on the content then fails and shows it).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace test_support
