// The harness's own CPU and RSS over a case (harness_self.hpp).
#include "harness/case/run/harness_self.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace harness::case_ {

pid_t agent_parent(const harness::kernel::Fs& fs) {
  const pid_t pp = ::getppid();
  auto r = fs.try_read("proc/" + std::to_string(pp) + "/cmdline");
  if (!r.ok()) return 0;
  bool harness = false, agent = false;
  std::size_t i = 0;
  while (i < r.text.size()) {
    std::size_t z = r.text.find('\0', i);
    if (z == std::string::npos) z = r.text.size();
    const std::string w = r.text.substr(i, z - i);
    if (w == "agent") agent = true;
    if (std::filesystem::path(w).filename().string().rfind("harness", 0) == 0) harness = true;
    i = z + 1;
  }
  return harness && agent ? pp : 0;
}

SelfAccounting::SelfAccounting(const harness::kernel::Fs& fs) : fs_(fs) {
  start_ns_ = harness::kernel::monotonic_ns();
  start_ = read_usage(fs_, 0);
  agent_pid_ = agent_parent(fs_);
  if (agent_pid_) agent_start_ = read_usage(fs_, agent_pid_);
}

void SelfAccounting::schedule_start() {
  if (sched_start_ns_) return;
  sched_start_ns_ = harness::kernel::monotonic_ns();
  sched_start_ = read_usage(fs_, 0);
  if (agent_pid_) agent_sched_start_ = read_usage(fs_, agent_pid_);
}

void SelfAccounting::schedule_end() {
  if (!sched_start_ns_) return;
  sched_end_ns_ = harness::kernel::monotonic_ns();
  sched_end_ = read_usage(fs_, 0);
  if (agent_pid_) agent_sched_end_ = read_usage(fs_, agent_pid_);
}

HarnessSelf SelfAccounting::finish(int vcpus, std::optional<std::int64_t> reclaim_write_cpu_ns,
                                   std::int64_t telemetry_cpu_ns) const {
  auto delta = [](const std::optional<std::int64_t>& a, const std::optional<std::int64_t>& z) {
    return a && z ? std::optional<std::int64_t>(*z - *a) : std::nullopt;
  };
  vcpus = std::max(1, vcpus);
  HarnessSelf h;
  h.wall_ns = harness::kernel::monotonic_ns() - start_ns_;
  const SelfUsage end = read_usage(fs_, 0);
  h.executor_cpu_ns = delta(start_.cpu_ns, end.cpu_ns);
  h.executor_peak_rss_kib = end.peak_rss_kib;
  if (agent_pid_) {
    const SelfUsage a = read_usage(fs_, agent_pid_);
    h.agent = HarnessSelf::Agent{agent_pid_, delta(agent_start_.cpu_ns, a.cpu_ns), a.peak_rss_kib};
  }
  // The memory.reclaim write runs in the executor's thread: its kernel reclaim work is
  // counted as the executor's system time, and it is the treatment's, not the harness's.
  h.reclaim_write_cpu_ns = reclaim_write_cpu_ns;
  const std::int64_t write_cpu = reclaim_write_cpu_ns.value_or(0);
  const std::int64_t agent_cpu = h.agent ? h.agent->cpu_ns.value_or(0) : 0;
  const std::int64_t agent_rss = h.agent ? h.agent->peak_rss_kib.value_or(0) : 0;
  if (h.executor_cpu_ns) {
    h.cpu_ns = *h.executor_cpu_ns - write_cpu + agent_cpu;
    h.vcpu_fraction = h.wall_ns > 0 ? static_cast<double>(*h.cpu_ns) / (static_cast<double>(h.wall_ns) * vcpus) : 0.0;
  }
  if (end.peak_rss_kib) {
    h.peak_rss_kib = std::max(*end.peak_rss_kib, agent_rss);
    h.peak_rss_sum_kib = *end.peak_rss_kib + agent_rss;
  }
  if (sched_start_ns_ && sched_end_ns_ && sched_start_.cpu_ns && sched_end_.cpu_ns) {
    HarnessSelf::Schedule s;
    s.wall_ns = *sched_end_ns_ - *sched_start_ns_;
    s.cpu_ns = *sched_end_.cpu_ns - *sched_start_.cpu_ns - write_cpu;
    if (agent_pid_ && agent_sched_start_.cpu_ns && agent_sched_end_.cpu_ns) {
      s.agent_cpu_ns = *agent_sched_end_.cpu_ns - *agent_sched_start_.cpu_ns;
      s.cpu_ns += *s.agent_cpu_ns;
    }
    s.telemetry_cpu_ns = telemetry_cpu_ns;
    s.vcpu_fraction = s.wall_ns > 0 ? static_cast<double>(s.cpu_ns) / (static_cast<double>(s.wall_ns) * vcpus) : 0.0;
    h.schedule = s;
  }
  return h;
}

}  // namespace harness::case_
