#pragma once
// `harness vm image --extra-binary PATH`: host executables put into the guest image beside the
// harness binaries (guest::kBinDir, first in the guest's PATH) with their shared libraries,
// e.g. /usr/bin/cyclictest for the in-guest latency reference
// (tests/bench/workloads/guest_latency_reference.sh).
#include <string>
#include <vector>

namespace harness::vm {

/// The names of the harness's own binaries in the image (harness, harness-agent, harness-case,
/// pressure-gen, canary-compute, canary-sqlite), in the order find_harness_binaries looks for them.
const std::vector<std::string>& harness_binary_names();

/// One binary put into the image: its name in the guest's bin directory and its host path.
struct ImageBinary {
  std::string name;  ///< file name in guest::kBinDir
  std::string path;  ///< absolute host path
};

/// Checks the --extra-binary paths and returns them as the image will hold them (name: the
/// path's file name; path: absolute, symbolic links resolved), in the order given. Each must be
/// an existing regular file (after links) with an execute bit set, and its name must differ
/// from every harness binary's (harness_binary_names) and from the other extras'. Throws
/// std::runtime_error naming the flag and the path: "--extra-binary PATH: no such file", "...: not
/// a regular file", "...: not executable (mode 0644)", "...: its name NAME is a harness binary's",
/// "...: its name NAME is also that of --extra-binary OTHER".
std::vector<ImageBinary> check_extra_binaries(const std::vector<std::string>& paths);

}  // namespace harness::vm
