#pragma once
// A repository campaign's text made independent of the build's cleanliness, for tests that
// plan it. Header-only; include as "tests/common/fixed_pin.hpp".
#include <string>

namespace test_support {

/// `text` with its first `pinned_commit: build` replaced by a fixed 40-hex commit (c...c), so
/// that planning it does not depend on whether this build is clean (ours).
inline std::string with_fixed_pin(std::string text) {
  const std::string from = "pinned_commit: build";
  const auto at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), "pinned_commit: " + std::string(40, 'c'));
  return text;
}

}  // namespace test_support
