#pragma once
// The harness's own CPU time and peak RSS over a case (outcome_json.harness_self, SPEC.md
// "Version 2 additions"): the executor's, plus its parent's when that is `harness agent`,
// over the whole case and over the measured schedule alone (first tick .. last tick),
// read from /proc/<pid>/{stat,status} (confounds.hpp). Goal: <= 0.25% of the vCPU over
// the measured schedule, <= 16 MiB per process (docs/DESIGN.md "Harness footprint in the
// guest").
#include <sys/types.h>

#include <cstdint>
#include <optional>

#include "harness/case/host/confounds.hpp"
#include "harness/kernel/fs.hpp"

namespace harness::case_ {

/// outcome_json.harness_self.
struct HarnessSelf {
  std::int64_t wall_ns = 0;  ///< case start .. now, ns
  std::optional<std::int64_t> executor_cpu_ns, executor_peak_rss_kib;
  struct Agent {
    pid_t pid = 0;
    std::optional<std::int64_t> cpu_ns, peak_rss_kib;
  };
  std::optional<Agent> agent;  ///< null when the parent is not `harness agent`
  /// CPU the memory.reclaim writes spent in the executor's threads (the treatment's work,
  /// not the harness's; every write of the case, so a policy's repeated writes too):
  /// subtracted from cpu_ns. Null without a write.
  std::optional<std::int64_t> reclaim_write_cpu_ns;
  /// executor + agent - reclaim write, ns; null when the executor's CPU was unreadable.
  std::optional<std::int64_t> cpu_ns;
  std::optional<double> vcpu_fraction;  ///< cpu_ns / (wall_ns x vcpus); null with cpu_ns
  /// The larger VmHWM of executor and agent, KiB; null when the executor's was unreadable.
  std::optional<std::int64_t> peak_rss_kib;
  std::optional<std::int64_t> peak_rss_sum_kib;  ///< executor + agent, KiB; absent with peak_rss_kib
  /// The same over the measured schedule (no setup, qualification or restoration, whose
  /// swapoff of a full zram is seconds of system time competing with nothing measured).
  struct Schedule {
    std::int64_t wall_ns = 0, cpu_ns = 0;
    /// The agent's part of cpu_ns, ns (the executor's is the rest); null when the parent is
    /// not the agent or its /proc/<pid>/stat was unreadable at either end.
    std::optional<std::int64_t> agent_cpu_ns;
    std::int64_t telemetry_cpu_ns = 0;  ///< thread CPU of the telemetry samples, ns
    double vcpu_fraction = 0;
  };
  std::optional<Schedule> schedule;  ///< null when the schedule never started or a reading failed
};

/// The parent process when it is a `harness agent` (its /proc/<ppid>/cmdline has a word
/// starting "harness" and the word "agent"), else 0.
pid_t agent_parent(const harness::kernel::Fs& fs);

class SelfAccounting {
 public:
  /// Reads the start of the case: now, the executor's usage, the agent parent's.
  explicit SelfAccounting(const harness::kernel::Fs& fs);
  /// At the first tick of the schedule (later calls do nothing).
  void schedule_start();
  /// After the last tick (nothing when the schedule never started).
  void schedule_end();
  /// The record at the end of the case. `vcpus` >= 1 (fewer counts as 1).
  HarnessSelf finish(int vcpus, std::optional<std::int64_t> reclaim_write_cpu_ns,
                     std::int64_t telemetry_cpu_ns) const;

 private:
  harness::kernel::Fs fs_;
  std::int64_t start_ns_ = 0;
  SelfUsage start_, agent_start_;
  pid_t agent_pid_ = 0;
  std::optional<std::int64_t> sched_start_ns_, sched_end_ns_;
  SelfUsage sched_start_, sched_end_, agent_sched_start_, agent_sched_end_;
};

}  // namespace harness::case_
