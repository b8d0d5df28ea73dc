// What a case's telemetry says of bg's memory and its reclaim CPU (see case_memory.hpp).
#include "analysis/data/case_memory.hpp"

#include "harness/kernel/size.hpp"

#include <algorithm>
#include <utility>

namespace analysis {
namespace {

constexpr double kBytesPerMiB = static_cast<double>(harness::kernel::kMiB);

/// Time average of (t_ns, value) points in t order: trapezoids over t, divided by the span; one
/// point (or a zero span): the mean of the values.
std::optional<double> time_average(const std::vector<std::pair<std::int64_t, double>>& v) {
  if (v.empty()) return std::nullopt;
  const double span = static_cast<double>(v.back().first - v.front().first);
  if (v.size() == 1 || span <= 0) {
    double sum = 0;
    for (const auto& x : v) sum += x.second;
    return sum / static_cast<double>(v.size());
  }
  double area = 0;
  for (std::size_t i = 1; i < v.size(); ++i)
    area += (v[i].second + v[i - 1].second) / 2 * static_cast<double>(v[i].first - v[i - 1].first);
  return area / span;
}

std::optional<double> mib(std::optional<double> bytes) {
  return bytes ? std::optional<double>(*bytes / kBytesPerMiB) : std::nullopt;
}

/// One phase's PhaseMemory from its samples.
PhaseMemory one_phase(const std::vector<const MemorySample*>& s) {
  std::vector<std::pair<std::int64_t, double>> cur, pool;
  std::optional<double> low, swap;
  for (const auto* x : s) {
    if (x->bg_current_bytes) {
      const double b = static_cast<double>(*x->bg_current_bytes);
      cur.emplace_back(x->t_ns, b);
      low = low ? std::min(*low, b) : b;
    }
    if (x->zram_mem_used_bytes) pool.emplace_back(x->t_ns, static_cast<double>(*x->zram_mem_used_bytes));
    if (x->swapfile_used_kib) swap = std::max(swap.value_or(0.0), static_cast<double>(*x->swapfile_used_kib) / 1024.0);
  }
  PhaseMemory m;
  m.bg_current_avg_mib = mib(time_average(cur));
  m.bg_current_min_mib = mib(low);
  m.zram_pool_avg_mib = mib(time_average(pool));
  if (!cur.empty() && !pool.empty())
    m.net_freed_mib = ((cur.front().second - cur.back().second) - (pool.back().second - pool.front().second)) / kBytesPerMiB;
  m.swapfile_used_max_mib = swap;
  return m;
}

}  // namespace

int phase_index(const std::string& phase) {
  for (int i = 0; i < 3; ++i)
    if (phase == kEffectPhases[i]) return i;
  return -1;
}

std::array<PhaseMemory, 3> phase_memory(const std::vector<MemorySample>& samples) {
  std::array<std::vector<const MemorySample*>, 3> by;
  for (const auto& s : samples)
    if (s.phase >= 0 && s.phase < 3) by[static_cast<std::size_t>(s.phase)].push_back(&s);
  std::array<PhaseMemory, 3> out;
  for (std::size_t p = 0; p < 3; ++p) out[p] = one_phase(by[p]);
  return out;
}

std::optional<double> dram_held_average(const std::vector<MemorySample>& samples, int phase) {
  std::vector<std::pair<std::int64_t, double>> v;
  for (const auto& s : samples)
    if (s.phase == phase && s.bg_current_bytes && s.zram_mem_used_bytes)
      v.emplace_back(s.t_ns, static_cast<double>(*s.bg_current_bytes + *s.zram_mem_used_bytes));
  return mib(time_average(v));
}

std::optional<double> writes_cpu_ms(const CaseSummary& c) {
  double sum = 0;
  for (const auto& r : c.outcome.reclaim) {
    if (r.start_ns < c.pressure_start_ns || r.start_ns >= c.pressure_end_ns) continue;
    if (!r.write_cpu_us) return std::nullopt;
    sum += static_cast<double>(*r.write_cpu_us) / 1e3;
  }
  return sum;
}

std::optional<double> reclaim_cpu_ms(const CaseSummary& c) {
  const auto w = writes_cpu_ms(c);
  if (!c.mech.kswapd_cpu_ms || !c.mech.bg_cpu_system_ms || !w) return std::nullopt;
  return *c.mech.kswapd_cpu_ms + *c.mech.bg_cpu_system_ms + *w;
}

}  // namespace analysis
