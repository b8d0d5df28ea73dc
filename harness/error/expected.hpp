#pragma once
// The one form of an expected failure above the kernel layer (docs/DESIGN.md "Errors"): a value
// or the Problem saying why there is none. tl::expected has the shape of C++23 std::expected.
#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace harness {

/// Why an operation failed: a sentence for the user, naming the file, line or field when known.
struct Problem {
  std::string message;
  bool operator==(const Problem&) const = default;
};

/// A `T`, or the Problem that kept the operation from producing one.
template <class T>
using Expected = tl::expected<T, Problem>;

/// A check: passed (truthy, no value), or the Problem saying why not.
using Checked = tl::expected<void, Problem>;

/// The failure of an Expected or a Checked: `return problem("field x: must be > 0");`.
inline tl::unexpected<Problem> problem(std::string message) {
  return tl::unexpected<Problem>(Problem{std::move(message)});
}

}  // namespace harness
