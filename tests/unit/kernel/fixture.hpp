#pragma once
// Paths of the fixture trees used by the hk_kernel unit tests.
#include <string>

namespace kernel_test {
/// Real capture from a Debian 6.1.0-57-cloud-amd64 guest under bg memory pressure.
inline std::string real_root() { return std::string(HARNESS_SOURCE_DIR) + "/tests/fixtures/6.1.0-57-cloud-amd64/root"; }
/// Edge-case tree `name` (tests/fixtures/kernel-edge/README.md).
inline std::string edge_root(const std::string& name) {
  return std::string(HARNESS_SOURCE_DIR) + "/tests/fixtures/kernel-edge/" + name + "/root";
}
}  // namespace kernel_test
