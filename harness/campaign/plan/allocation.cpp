// Balanced allocation of triplets to strata (see allocation.hpp).
#include "harness/campaign/plan/allocation.hpp"

#include "harness/campaign/plan/seeding.hpp"

#include <boost/random/mersenne_twister.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace harness::campaign {

StratumSizes balanced_allocation(std::uint64_t seed, const std::vector<std::string>& vms,
                                 const std::vector<std::string>& regimes, int triplets_per_regime) {
  if (vms.empty() || regimes.empty() || triplets_per_regime < 1)
    throw std::invalid_argument("balanced_allocation: needs VMs, regimes and at least one triplet per regime");
  const int v = static_cast<int>(vms.size());
  const int base = triplets_per_regime / v, extra = triplets_per_regime % v;
  std::vector<int> order(v);
  std::iota(order.begin(), order.end(), 0);
  boost::random::mt19937_64 rng(fnv1a(seed, "design.allocation"));
  seeded_shuffle(order, rng);
  StratumSizes out;
  int slot = 0;  // next position in the permutation that receives an extra triplet
  for (const auto& g : regimes) {
    for (const auto& vm : vms) out[vm][g] = base;
    for (int j = 0; j < extra; ++j, ++slot) out[vms[order[slot % v]]][g] += 1;
  }
  return out;
}

StratumSizes uniform_allocation(const std::vector<std::string>& vms, const std::vector<std::string>& regimes,
                                int repeats) {
  StratumSizes out;
  for (const auto& vm : vms)
    for (const auto& g : regimes) out[vm][g] = repeats;
  return out;
}

std::string stratum_table(const StratumSizes& s, const std::vector<std::string>& vms,
                          const std::vector<std::string>& regimes, const std::string& unit) {
  std::size_t w0 = 5;
  for (const auto& vm : vms) w0 = std::max(w0, vm.size());
  std::string out = fmt::format("{:<{}}", "vm", w0);
  for (const auto& g : regimes) out += fmt::format("  {:>{}}", g, g.size());
  out += "  total\n";
  std::map<std::string, int> per_regime;
  int ones = 0, strata = 0, all = 0;
  for (const auto& vm : vms) {
    out += fmt::format("{:<{}}", vm, w0);
    int total = 0;
    for (const auto& g : regimes) {
      const auto vit = s.find(vm);
      int n = 0;
      if (vit != s.end()) {
        const auto git = vit->second.find(g);
        if (git != vit->second.end()) n = git->second;
      }
      out += fmt::format("  {:>{}}", n, g.size());
      total += n;
      per_regime[g] += n;
      ++strata;
      if (n == 1) ++ones;
    }
    all += total;
    out += fmt::format("  {:>5}\n", total);
  }
  out += fmt::format("{:<{}}", "total", w0);
  for (const auto& g : regimes) out += fmt::format("  {:>{}}", per_regime[g], g.size());
  out += fmt::format("  {:>5}\n", all);
  out += fmt::format("{} of {} strata have one {}\n", ones, strata, unit);
  return out;
}

}  // namespace harness::campaign
