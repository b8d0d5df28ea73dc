#pragma once
// A Checked or an Expected (harness/error/expected.hpp) as a test compares it with text: "" when
// it passed, else its Problem's message. Header-only; include as "tests/common/problem_text.hpp".
#include <string>

#include "harness/error/expected.hpp"

namespace test_support {

template <class T>
std::string problem_text(const harness::Expected<T>& r) {
  return r ? std::string() : r.error().message;
}

}  // namespace test_support
