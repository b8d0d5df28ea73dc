#pragma once
// The swap backends of a case (study; docs/DESIGN.md "Configurations"): zram is "the backend"
// (high priority), the swapfile is a low-priority spill device present in every
// configuration. Priorities are set with swapon(2) (kernel::swapon; busybox has no -p).
//
//   static-zram         zram swapped on before the case; no action.
//   delayed-activation  zram prepared (algorithm, disksize, swap header) but off; activate()
//                       swaps it on once when the trigger fires.
//   bounded-reclaim     zram swapped on before the case (the action is memory.reclaim).
//
// The executor owns zram device 0 (created with hot_add when absent): a leftover swapon
// or initialised state of zram0 is treated as a crashed earlier case and cleaned.
#include <string>
#include <vector>

#include "harness/case/case_cgroups.hpp"
#include "harness/case/spec.hpp"
#include "harness/kernel/fs.hpp"
#include "harness/kernel/zram.hpp"

namespace hcase {

class Backend {
 public:
  Backend(const kernel::Fs& fs, const BackendSpec& spec, Configuration conf);

  /// Validates the swapfile (no holes, signature), configures zram (reset if initialised,
  /// comp_algorithm, disksize, swap header), swaps on the swapfile at swapfile_priority and,
  /// unless delayed-activation, zram at zram_priority. Appends steps. Throws
  /// std::runtime_error naming the step on failure (infra_failed; caller tears down).
  void prepare(std::vector<StepRecord>& steps);

  /// delayed-activation: swapon zram at zram_priority (once). Returns the step (errno as
  /// data; the case goes on whatever it says).
  StepRecord activate();

  /// swapoff zram (if the case enabled it), swapoff the swapfile, zram reset. Appends
  /// steps; never throws for kernel errors (swapoff can fail with ENOMEM: recorded).
  void teardown(std::vector<StepRecord>& steps);

  /// Before a case: swapoff the spec's swapfile and /dev/zram0 when active, reset zram0
  /// when initialised (a crashed earlier case). Appends steps; never throws for kernel errors.
  static void cleanup_leftovers(const kernel::Fs& fs, const BackendSpec& spec, std::vector<StepRecord>& steps);

  /// "/dev/zram<N>" once prepared ("" before).
  std::string zram_path() const { return zram_ ? zram_->dev_path() : std::string(); }
  const std::string& swapfile_path() const { return spec_.swapfile_path; }
  /// The zram device (nullptr before prepare()).
  const kernel::Zram* zram() const { return zram_ ? &*zram_ : nullptr; }
  bool zram_on() const { return zram_on_; }
  /// Devices this case swapped on (for restoration verification).
  std::vector<std::string> enabled_paths() const;

 private:
  kernel::Fs fs_;
  BackendSpec spec_;
  Configuration conf_;
  std::optional<kernel::Zram> zram_;
  bool zram_on_ = false;
  bool swapfile_on_ = false;
  bool zram_was_on_ = false;
};

}  // namespace hcase
