#pragma once
// What a case's telemetry says of bg's memory over its phases and of the CPU its reclaim took
// (ours; the per-case readings that tables/arm_effects.hpp aggregates per arm and comparison):
// bg memory.current, the zram pool and the swapfile per phase, the DRAM bg's pages held, and
// the reclaim CPU (kswapd, bg system time, the memory.reclaim writes). Kept with the DB's rows
// (data/) because the case summary (campaign_data.cpp) fills them as it reads the telemetry.
#include "analysis/data/case_summary.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// One telemetry sample as arm_effects reads it (bytes; KiB for the swapfile).
struct MemorySample {
  std::int64_t t_ns = 0;
  int phase = -1;  ///< phase_index of the sample's phase
  std::optional<std::int64_t> bg_current_bytes, zram_mem_used_bytes, swapfile_used_kib;
};

/// 0 warmup, 1 pressure, 2 recovery, -1 any other text.
int phase_index(const std::string& phase);
/// The phases' names in phase_index order.
inline constexpr const char* kEffectPhases[3] = {"warmup", "pressure", "recovery"};

/// PhaseMemory of each phase from the case's samples in t_ns order (case_summary.hpp): time
/// averages by trapezoids over t_ns (one sample: its value), minimum, net freed, swapfile maximum.
std::array<PhaseMemory, 3> phase_memory(const std::vector<MemorySample>& samples);

/// Time average over phase `phase`'s samples of bg memory.current + zram mem_used_total (samples
/// carrying both), MiB; nullopt when none does.
std::optional<double> dram_held_average(const std::vector<MemorySample>& samples, int phase);

/// CPU time of the case's memory.reclaim writes that started in the pressure phase, ms: the sum of
/// their write_cpu_us; 0 when the case made no write there; nullopt when a write there lacks it.
std::optional<double> writes_cpu_ms(const CaseSummary& c);

/// The CPU time reclaim took in the pressure phase, ms: kswapd + bg system time + the writes;
/// nullopt when one of the three is not measured.
std::optional<double> reclaim_cpu_ms(const CaseSummary& c);

}  // namespace analysis
