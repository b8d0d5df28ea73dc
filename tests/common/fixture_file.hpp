#pragma once
// The whole text of a captured fixture file, for unit tests that replay kernel files. A
// missing or unreadable file fails the calling test (EXPECT, naming the path) and reads as
// "", so the parser under test then reports it too. Header-only; include as
// "tests/common/fixture_file.hpp".
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/common/slurp.hpp"

namespace test_support {

inline std::string fixture_text(const std::string& path) {
  EXPECT_TRUE(std::ifstream(path).good()) << path;
  return slurp(path);
}

}  // namespace test_support
