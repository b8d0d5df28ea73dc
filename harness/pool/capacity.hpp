#pragma once
// Capacity before anything boots (ours; the study ran one 1-vCPU / 1-GiB guest per VM and
// says nothing of hypervisor load): a campaign may put on a host at most cores - 1 guest
// vCPUs (one core left for the host: qemu's I/O threads, the runner) and at most the
// memory the host has available. A placement beyond that is refused at `harness plan`,
// `harness run` and `harness vm up`, naming host, guests, cores and memory, unless the
// campaign says provider.overcommit: true (then every case on that host records
// cases.overcommitted = 1 and the report warns). A host whose cores or memory are unknown
// (the hosts engine) is not judged; nor is a host that did not answer (HostCapacity::
// unreachable): `harness plan` says "not judged: host X unreachable; judged again at run",
// and `harness run` refuses to start until it answers (CapacityVerdict::unreachable).
#include "harness/pool/pool.hpp"

#include <string>
#include <vector>

namespace harness::pool {

/// The shape of every guest (the campaign's vm block).
struct GuestShape {
  int vcpus = 1;
  int memory_mib = 1024;
};

/// One host as judged.
struct HostVerdict {
  HostCapacity capacity;
  int guest_vcpus = 0;             ///< (campaign guests + other running guests) x vcpus
  std::int64_t guest_memory_mib = 0;  ///< campaign guests not yet running x memory_mib
  bool judged = false;             ///< cores and memory known
  bool over = false;               ///< judged and beyond cores - 1 or the memory available
  std::string why;                 ///< the host, its guests, cores and memory, when over
};

struct CapacityVerdict {
  bool ok = true;                  ///< nothing over, or over with overcommit allowed
  bool overcommit_allowed = false; ///< provider.overcommit
  std::vector<HostVerdict> hosts;
  std::vector<std::string> problems;  ///< HostVerdict::why of every host that is over
  /// "HOST: why" of every host that did not answer (not judged; `harness run` refuses then).
  std::vector<std::string> unreachable;
  std::string table;               ///< one row per host, then the problems or the overcommit note
  /// True when `host` was judged over (its cases record cases.overcommitted = 1); nullopt
  /// when it was not judged or is not a host of this verdict.
  std::optional<bool> overcommitted(const std::string& host) const;
  /// The refusal text (problems and what to do), for CapacityError. "" when ok. `allow`
  /// says how to allow overcommit where the refusal comes from.
  std::string refusal(const std::string& allow = "set provider.overcommit: true") const;
};

/// Judges `hosts` for guests of `shape` (rule at the top of this file). `engine` only names
/// the engine in the table.
CapacityVerdict check_capacity(const std::vector<HostCapacity>& hosts, GuestShape shape, bool overcommit,
                               const std::string& engine);

}  // namespace harness::pool
