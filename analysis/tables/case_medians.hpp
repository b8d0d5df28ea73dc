#pragma once
// The report's secondary tables over every completed and lost case (analysis/README.md
// "Secondary tables"): Table 5 (wake delay, service time, response p99, deadline misses), Table 5b
// (page faults, context switches), Table 6 (p99 per regime and configuration) and the mechanism
// table (PSI stall, refaults, swap, zram, the memory.reclaim write CPU, the study's medians). A
// value enters a median only from a case that measured it; a lost case enters the p99 medians with
// its imputed p99 and nothing else.
#include "analysis/data/triplets.hpp"
#include "analysis/tables/table.hpp"

#include <string>
#include <vector>

namespace analysis {

/// Table 5 (`table5_wake_service`): per arm and canary, medians over cases of each case's
/// pressure-phase p50/p99 wake delay, service time and response p99 (ms); deadline misses and
/// requests summed. `unit`: the word for a block ("triplet" or "block").
Table table5(const std::vector<const CaseSummary*>& cases, const std::vector<std::string>& arms, const std::string& unit);

/// Table 5b (`table5b_faults_context_switches`): per arm and canary, medians and sums of the
/// per-case sums of minor and major faults and voluntary and involuntary context switches.
Table table5_usage(const std::vector<const CaseSummary*>& cases, const std::vector<std::string>& arms);

/// Table 6 (`table6_regime_medians`): per regime and arm, the median pressure-phase p99 of each
/// canary (ms; descriptive, unpaired).
Table table6(const std::vector<const CaseSummary*>& cases, const std::vector<std::string>& arms);

/// The mechanism table (`mechanism`): per arm of ts, medians over its measured cases of the
/// pressure-phase PSI stall (s), memory.reclaim write CPU (ms), refaults, swap and zram peaks
/// (MiB), swap-out (KiB), with the study's published medians beside a study arm.
Table mechanism(const std::vector<const CaseSummary*>& cases, const TripletSet& ts);

}  // namespace analysis
