#pragma once
// The bearer token of the agent tests and its file: one token, one way to write the file
// (token_test.cpp, auth_routing_test.cpp, the agent process fixture).
#include "tests/common/temp_dir.hpp"

#include <sys/stat.h>

#include <fstream>
#include <string>

namespace agent_test {

/// The bearer token of the tests' agents (at least kMinTokenChars = 32 characters).
inline const char* kToken = "s3cr3t-token-0123456789abcdef-0123456789";

/// Writes `content` to `dir`/`name` with `mode` (0600 is what the agent accepts); returns
/// the path.
inline std::string write_token_file(const std::string& dir, const std::string& content, mode_t mode = 0600,
                                    const std::string& name = "token") {
  const std::string p = dir + "/" + name;
  { std::ofstream(p, std::ios::trunc) << content; }
  ::chmod(p.c_str(), mode);
  return p;
}

}  // namespace agent_test
