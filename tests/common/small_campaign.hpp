#pragma once
// The smallest valid campaign text for unit tests that parse or run campaigns: kind smoke,
// 1 s phases, one regime, the three configurations, a matched-triplets design. The provider
// block, the design's keys after `kind: matched-triplets` and any lines after the design are
// the caller's. Header-only; include as "tests/common/small_campaign.hpp".
#include <string>

namespace test_support {

/// `provider` is a YAML flow mapping ("{kind: hosts, vms: [vm0]}"); `design` the rest of the
/// design mapping ("repeats: 1, dose_mib: 96"); `tail` whole lines, each ending in "\n".
/// The provider block is on line 6 (errors name it).
inline std::string small_campaign_yaml(const std::string& provider, const std::string& design = "repeats: 1, dose_mib: 96",
                                       const std::string& tail = "") {
  return "name: t\nkind: smoke\nseed: 5\npinned_commit: any\nvm: {vcpus: 1, memory_mib: 1024}\n"
         "provider: " + provider + "\n"
         "phases_s: {warmup: 1, pressure: 1, recovery: 1}\n"
         "cgroups: {bg_memory_max_mib: 300}\n"
         "backend:\n  zram: {disksize_mib: 512, algorithm: lzo-rle, priority: 100}\n"
         "  swapfile: {path: /var/lib/harness/swapfile, priority: 10}\n"
         "pressure: {allocation_mib: 600, active_set_mib: 128}\n"
         "regimes:\n  - {name: fast-structured, rate_mib_s: 64, contents: structured}\n"
         "canaries: {}\ntrigger: {}\n"
         "configurations: [static-zram, delayed-activation, bounded-reclaim]\n"
         "design: {kind: matched-triplets, " + design + "}\n" + tail;
}

}  // namespace test_support
