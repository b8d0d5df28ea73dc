#pragma once
// What an arm buys and what it costs (ours; analysis/README.md "Decisions"; secondary
// measurements, never in the verdict):
//   buys:  memory offloaded from bg: per phase (warmup, pressure, recovery) the time-averaged and
//          the minimum bg memory.current, and the net DRAM freed, the fall of bg memory.current
//          less the growth of the zram pool (mm_stat mem_used_total), with the swapfile's use beside
//          it (disk, not DRAM); over the pressure phase the DRAM bg's pages held, resident or in
//          the zram pool (time average of memory.current + mem_used_total);
//   costs: fg p99 and fg PSI (the primary outcome and the mechanism), reclaim work (bg pgsteal,
//          refaults) and the CPU time reclaim took, where the kernel accounts it: the kswapd
//          threads' utime + stime (/proc/<pid>/stat), bg's system time (cpu.stat system_usec:
//          direct reclaim and the compression into zram in it, and page faults) and the
//          memory.reclaim writers' thread CPU (reclaim_actions.write_cpu_us, CLOCK_THREAD_CPUTIME_ID
//          around write(2): the write reclaims in the writer's context), over the pressure phase.
// Per case (tables arm_effects_cases, arm_effects) and per declared comparison: the study's
// stratified bootstrap (same B, seed and level 1 - alpha/m as Table 4) on the paired block
// differences of each secondary endpoint (table secondary_endpoints), and the trade-off of each
// comparison, memory freed against its p99 ratio, both with intervals (extra.tradeoff, the figure
// tradeoff.png).
#include "analysis/data/case_memory.hpp"
#include "analysis/data/triplets.hpp"
#include "analysis/tables/primary.hpp"
#include "analysis/tables/table.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// One secondary endpoint of the paired comparison: its name with unit, the per-case value, and
/// the sign of the block difference (`freed`: comparator - treatment, so that positive = the
/// treatment freed memory; otherwise treatment - comparator).
struct SecondaryEndpoint {
  const char* name;
  const char* unit;
  bool freed;
  std::optional<double> (*value)(const CaseSummary&);
};
/// The endpoints in report order (net DRAM freed first: the trade-off figure's x).
const std::vector<SecondaryEndpoint>& secondary_endpoints();

/// One endpoint's interval for one (treatment, comparator) pair of the family.
struct EndpointInterval {
  std::string endpoint, unit;
  int blocks = 0;  ///< blocks whose two cases both measured it (0: no interval)
  double estimate = 0, lower = 0, upper = 0;
};

/// The secondary intervals of one (treatment, comparator) pair and the declared comparisons it
/// serves (the endpoints do not depend on the canary).
struct PairEffects {
  std::string treatment, comparator;
  std::vector<std::string> comparisons;   ///< labels of the family's comparisons of this pair
  std::vector<EndpointInterval> endpoints;  ///< secondary_endpoints() order
};

/// Per distinct (treatment, comparator) pair of ts's family, in family order: each endpoint's
/// estimate (mean over strata of stratum-mean block differences) and percentile interval at
/// pr.level, from stratified_bootstrap with pr's B and seed over the complete blocks whose two
/// cases measured it (all blocks: the same resampling indices as Table 4). Lost cases have no
/// telemetry: their blocks drop out of these endpoints.
std::vector<PairEffects> secondary_intervals(const TripletSet& ts, const PrimaryResult& pr);

/// Table arm_effects_cases: one row per case of ts's blocks (what it bought and cost).
Table case_effects_table(const TripletSet& ts);
/// Table arm_effects: per arm, medians over its measured cases of arm_effects_cases' columns.
Table arm_effects_table(const TripletSet& ts);
/// Table secondary_endpoints: one row per pair and endpoint, labelled secondary.
Table secondary_table(const std::vector<PairEffects>& pairs, const PrimaryResult& pr);

/// extra.tradeoff: one point per declared comparison: its label, canary, treatment, comparator,
/// p99 ratio and interval (Table 4's), and the pair's net DRAM freed (MiB) and interval.
nlohmann::json tradeoff_json(const std::vector<PairEffects>& pairs, const PrimaryResult& pr);

}  // namespace analysis
