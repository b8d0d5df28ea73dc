#pragma once
// The options of `harness case run` (executor.hpp run_case): where the bundle goes, the
// filesystem root, the workload binaries, and the timings of the case around its phases.
// Kept apart from the executor so that the steps it runs (preconditions.hpp, ...) read them
// without including the executor.
#include <cstdint>
#include <string>

#include "qualify/thresholds.hpp"

namespace harness::case_ {

struct ExecutorOptions {
  std::string out_dir;                 ///< bundle at out_dir/<case_id>.db; work files in <case_id>.work/
  std::string root = "/";              ///< harness::kernel::Fs root (the live system)
  std::string bin_dir;                 ///< pressure-gen, canary-compute, canary-sqlite; "" = dir of /proc/self/exe
  std::string accelerator;             ///< "" = from /proc/cmdline harness.accelerator=, else detected (accelerator_detect.hpp)
  bool skip_qualification = false;     ///< development only; recorded in qualification_json
  /// passed to qualify (disk of out_dir); default qualify::kMinFreeDiskMiB, as `harness qualify`
  std::uint64_t min_free_disk_bytes = qualify::kMinFreeDiskMiB << 20;
  std::int64_t start_lead_ns = 3'000'000'000;      ///< T0 - spawn time: canaries load before T0
  std::int64_t canary_exit_grace_ns = 60'000'000'000;  ///< wait after the last phase for traces
  std::int64_t reclaim_settle_ns = 2'200'000'000;  ///< memcg stat flush delay (docs/DESIGN.md "Controller")
  int attempt = 1;
};

}  // namespace harness::case_
