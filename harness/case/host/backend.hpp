#pragma once
// The swap backends of a case (study; docs/DESIGN.md "Configurations"): zram is "the backend"
// (high priority), the swapfile is a low-priority spill device present in every
// configuration. Priorities are set with swapon(2) (harness::kernel::swapon; busybox has no -p).
// Whether zram is swapped on at the start (ZramAtStart::On) or only prepared and swapped
// on by activate() when the trigger fires (ZramAtStart::Prepared) is the configuration's
// choice (harness/case/policies/).
//
// The zram device is the harness's own (kernel/zram_owner.hpp): created with
// zram-control/hot_add for the case (marker under /run) and removed with hot_remove at
// teardown, so that a device another tool set up (zram-tools, a distro generator) is never
// touched; without zram-control an unused spare device is borrowed and reset. Devices the
// harness did not create are never swapped off, reset or removed.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case/host/case_cgroups.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/kernel/fs.hpp"
#include "harness/kernel/zram.hpp"
#include "harness/kernel/zram_owner.hpp"

namespace harness::case_ {

/// Outcome of Backend::cleanup_leftovers.
struct LeftoverCleanup {
  bool released = true;  ///< every leftover of the harness's devices is gone
  /// When !released: the cause first, e.g. "leftover swapoff /var/lib/harness/swapfile
  /// failed with ENOMEM (Cannot allocate memory); 24576 KiB still swapped there; swapped
  /// memory held by: pid 812 pressure-gen (T (stopped), cgroup /holder) 24576 KiB".
  std::string cause;
};

/// zram at the start of a case: swapped on by prepare(), or prepared (algorithm, disksize,
/// swap header) and left off until activate().
enum class ZramAtStart { On, Prepared };

/// One step that was retried on EBUSY (outcome_json.zram.retried_steps).
struct RetriedStep {
  std::string step;
  int retries = 0;
  int err = 0;  ///< errno of the final attempt
};

/// outcome_json.zram: the harness's zram device of the case.
struct ZramRecord {
  std::string device;  ///< "/dev/zramN"
  int id = 0;
  harness::kernel::ZramOrigin how = harness::kernel::ZramOrigin::HotAdd;
  bool released = false;  ///< removed (hot_add) or reset (spare) at teardown
  std::vector<RetriedStep> retried_steps;
  int ebusy_retries() const;  ///< sum over retried_steps
};
/// {device, id, how, released, ebusy_retries, retried_steps: [{step, retries, errno}]}.
nlohmann::json to_json(const ZramRecord& z);

class Backend {
 public:
  /// `retry`: backoff for EBUSY on zram reset/hot_remove (tests pass short delays).
  Backend(const harness::kernel::Fs& fs, const BackendSpec& spec, ZramAtStart start, harness::kernel::BusyRetryPolicy retry = {});

  /// Validates the swapfile (no holes, signature), takes the harness's own zram device
  /// (hot_add + ownership marker; fallback: an unused spare device), configures it
  /// (comp_algorithm, disksize, swap header), swaps on the swapfile at swapfile_priority
  /// and, with ZramAtStart::On, zram at zram_priority. Appends steps. Throws
  /// std::runtime_error naming the step on failure (infra_failed; caller tears down).
  void prepare(std::vector<StepRecord>& steps);

  /// ZramAtStart::Prepared: swapon zram at zram_priority (once, when the trigger fires). Returns the step (errno as
  /// data; the case goes on whatever it says).
  StepRecord activate();

  /// The swapfile is swapped on by prepare(): every configuration, except delayed-activation
  /// with backend.delayed_swapfile off (spec.hpp DelayedSwapfile).
  bool swapfile_at_start() const;
  /// With the swapfile left off at the start: swapon swapfile at swapfile_priority (at the
  /// trigger, after zram); the step, errno as data. nullopt when it is already on or the
  /// backend is not prepared (nothing to do).
  std::optional<StepRecord> activate_swapfile();

  /// swapoff zram (if the case enabled it), swapoff the swapfile, zram reset and (device
  /// created by hot_add) hot_remove, both retried on EBUSY; the marker is removed once the
  /// device is released. Appends steps; never throws for kernel errors (swapoff can fail
  /// with ENOMEM: recorded, and the device is then left alone, marker kept, for the next
  /// case's leftover cleanup).
  void teardown(std::vector<StepRecord>& steps);

  /// Before a case: swapoff the spec's swapfile when active; for the zram device named in
  /// a current ownership marker (a crashed earlier case): swapoff, reset, hot_remove
  /// (EBUSY retried); a stale marker (other boot, device gone) is dropped. Nothing else is
  /// touched. Stops at the first failing step and says why (errno name; for a failed
  /// swapoff, what is still swapped and which processes hold swapped memory). Appends steps.
  static LeftoverCleanup cleanup_leftovers(const harness::kernel::Fs& fs, const BackendSpec& spec,
                                           std::vector<StepRecord>& steps, const harness::kernel::BusyRetryPolicy& retry = {});

  /// "/dev/zram<N>" once prepared ("" before).
  std::string zram_path() const { return zram_ ? zram_->dev_path() : std::string(); }
  const std::string& swapfile_path() const { return spec_.swapfile_path; }
  /// The zram device (nullptr before prepare()).
  const harness::kernel::Zram* zram() const { return zram_ ? &*zram_ : nullptr; }
  bool zram_on() const { return zram_on_; }
  /// True once teardown removed (hot_add) or reset (spare device) the harness's device.
  bool zram_released() const { return zram_released_; }
  /// How the device was taken (nullopt before prepare took one).
  std::optional<harness::kernel::ZramOrigin> zram_origin() const { return how_; }
  /// Devices this case swapped on (for restoration verification).
  std::vector<std::string> enabled_paths() const;
  /// The device's record (outcome_json.zram, SPEC.md); nullopt before a device was taken.
  std::optional<ZramRecord> zram_record() const;
  /// to_json(*zram_record()), or null.
  nlohmann::json zram_json() const;

 private:
  void take_zram(std::vector<StepRecord>& steps);
  StepRecord retried(const std::string& name, const std::function<harness::kernel::WriteResult()>& op);

  harness::kernel::Fs fs_;
  BackendSpec spec_;
  ZramAtStart start_;
  harness::kernel::BusyRetryPolicy retry_;
  std::optional<harness::kernel::Zram> zram_;
  std::optional<harness::kernel::ZramOrigin> how_;
  bool zram_on_ = false;
  bool swapfile_on_ = false;
  bool zram_was_on_ = false;
  bool zram_released_ = false;
  std::vector<RetriedStep> retried_steps_;
};

}  // namespace harness::case_
