#pragma once
// The case's cgroups: a harness-owned parent under the cgroup2 root with two sibling
// children bg/ and fg/ (study: "sibling background and foreground cgroups"). Nothing
// outside the parent is created or removed. The executor process stays in its own
// (original) cgroup: the parent enables +memory for its children, so by the
// no-internal-process rule it must hold no process itself.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case/spec/spec.hpp"
#include "harness/kernel/cgroup.hpp"

namespace harness::case_ {

/// One timed step of setup or teardown: what was done, how long, errno as data.
struct StepRecord {
  std::string step;          ///< e.g. "mkdir bg", "swapoff /dev/zram0"
  std::int64_t duration_ns = 0;
  int err = 0;               ///< 0 = ok
  std::string message;       ///< "ok" or the kernel layer's message
  int retries = 0;           ///< EBUSY retries before the final result (zram reset/hot_remove)
  /// {"step","duration_ns","errno","message"} plus "retries" when > 0.
  nlohmann::json to_json() const;
};

/// The steps as a JSON array of StepRecord::to_json().
nlohmann::json steps_json(const std::vector<StepRecord>& steps);

/// Appends `r` to `steps`; when it failed (err != 0) throws std::runtime_error
/// "<what> step '<step>' failed: <message>" (`what`: "cgroup setup", "backend").
void must_step(const char* what, std::vector<StepRecord>& steps, StepRecord r);

/// bg and fg memory.events counters at one moment (nullopt = unreadable).
struct OomCounts {
  std::optional<std::int64_t> bg_oom, bg_oom_kill, fg_oom, fg_oom_kill;
};

/// Runs `fn` (returning harness::kernel::WriteResult), timing it into a StepRecord.
template <typename Fn>
StepRecord timed_step(const std::string& name, Fn&& fn);

class CaseCgroups {
 public:
  /// `fs` is the host root; `spec.cgroups.parent` names the parent under sys/fs/cgroup.
  CaseCgroups(const harness::kernel::Fs& fs, const CgroupsSpec& spec);

  const harness::kernel::Cgroup& parent() const { return parent_; }
  const harness::kernel::Cgroup& bg() const { return bg_; }
  const harness::kernel::Cgroup& fg() const { return fg_; }

  /// Enables +memory in the cgroup2 root's subtree_control when missing (needed for any
  /// memory.* file in a child; the qualification probe needs it too). Appends the step
  /// (none when already enabled). Throws std::runtime_error (e.g. ENOENT: memory bound to v1).
  void enable_root_memory(std::vector<StepRecord>& steps) const;

  /// Enables +memory in the root's subtree_control if missing, creates parent, enables
  /// +memory there, creates bg and fg and writes their limits (bg memory.max, optional
  /// bg memory.high, fg memory.max, fg memory.low). Appends each step to `steps`.
  /// Throws std::runtime_error naming the failing step (errno included): the case is then
  /// infra_failed and the caller removes what was created.
  void create(std::vector<StepRecord>& steps) const;

  /// Stops everything inside the parent: writes cgroup.kill and waits (up to timeout_ns)
  /// until cgroup.events says unpopulated. Returns the step (err ETIMEDOUT if still populated).
  StepRecord kill_all(std::int64_t timeout_ns) const;

  /// rmdir fg, bg, parent (those that exist). Appends steps. Never throws for kernel errors.
  void remove(std::vector<StepRecord>& steps) const;

  /// Case cgroup dirs (relative to the Fs root) that exist now.
  std::vector<std::string> present() const;
  /// Pids still in bg, fg or the parent (cgroup.procs), for the stray-process check.
  std::vector<pid_t> pids() const;
  /// oom and oom_kill of bg and fg memory.events; a file that cannot be read leaves nullopt.
  OomCounts oom_counts() const;

 private:
  harness::kernel::Fs fs_;
  CgroupsSpec spec_;
  harness::kernel::Cgroup root_, parent_, bg_, fg_;
};

template <typename Fn>
StepRecord timed_step(const std::string& name, Fn&& fn) {
  StepRecord r;
  r.step = name;
  auto t0 = harness::kernel::monotonic_ns();
  harness::kernel::WriteResult w = fn();
  r.duration_ns = harness::kernel::monotonic_ns() - t0;
  r.err = w.err;
  r.message = w.message();
  return r;
}

}  // namespace harness::case_
