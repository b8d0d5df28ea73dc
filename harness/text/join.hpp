#pragma once
// A list as one line of text ("vm0, vm1", "a; b"): the one join of the harness, for messages,
// tables and printed commands. Header-only.
#include <string>
#include <string_view>

namespace harness::text {

/// The elements of `items` in iteration order, `sep` between two of them; "" for an empty
/// range. An element is appended as it is, so it must be appendable to std::string
/// (std::string, std::string_view, const char*, char). Never throws except std::bad_alloc.
template <class Range>
std::string join(const Range& items, std::string_view sep = ", ") {
  std::string out;
  bool first = true;
  for (const auto& x : items) {
    if (!first) out += sep;
    first = false;
    out += x;
  }
  return out;
}

/// Same, each element written as `text(element)` (anything appendable to std::string), for
/// ranges of records ("the names of these arms") and of numbers.
template <class Range, class Text>
std::string join(const Range& items, std::string_view sep, const Text& text) {
  std::string out;
  bool first = true;
  for (const auto& x : items) {
    if (!first) out += sep;
    first = false;
    out += text(x);
  }
  return out;
}

}  // namespace harness::text
