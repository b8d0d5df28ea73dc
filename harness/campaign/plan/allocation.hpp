#pragma once
// Seeded balanced allocation of matched triplets to (vm, regime) strata.
//
// Study: "60 matched triplets ... on vm0 through vm8", 15 per pressure regime (Table 6:
// "each cell summarizes 15 cases"). 15 does not divide over 9 VMs, so strata differ in
// size. The study does not say how the triplets were spread; PROTOCOL.md assumption:
//   1. each regime's triplets as even as possible over the VMs: every VM gets
//      floor(T / V) and (T mod V) VMs get one more;
//   2. each VM's total over the regimes as even as possible: the "one more" slots are dealt
//      cyclically over a seeded permutation of the VMs, regime after regime, so a VM's
//      count of extra slots is floor or ceil of R * (T mod V) / V;
//   3. which VMs get the extra slots is decided by the seed (the permutation).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace harness::campaign {

/// Triplets per (vm, regime) stratum: allocation[vm][regime] = number of triplets (>= 0).
using StratumSizes = std::map<std::string, std::map<std::string, int>>;

/// Spreads `triplets_per_regime` triplets of every regime over `vms` (rule above).
/// Deterministic for (seed, vms, regimes, triplets_per_regime). Throws
/// std::invalid_argument when vms or regimes is empty or triplets_per_regime < 1.
StratumSizes balanced_allocation(std::uint64_t seed, const std::vector<std::string>& vms,
                                 const std::vector<std::string>& regimes, int triplets_per_regime);

/// The same table for the `repeats` design: every stratum gets `repeats` triplets.
StratumSizes uniform_allocation(const std::vector<std::string>& vms, const std::vector<std::string>& regimes,
                                int repeats);

/// Readable vm x regime table of stratum sizes, VM totals in the last column, regime
/// totals in the last row, then "N of M strata have one <unit>" (unit: "triplet", or
/// "pair" for ab-pairs).
std::string stratum_table(const StratumSizes& s, const std::vector<std::string>& vms,
                          const std::vector<std::string>& regimes, const std::string& unit = "triplet");

}  // namespace harness::campaign
