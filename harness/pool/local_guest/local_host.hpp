#pragma once
// This machine as the hypervisor host of local guests: its name as cases record it and
// its capacity (online CPUs and MemAvailable; harness/pool/capacity.hpp judges it).
#include "harness/pool/pool.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace harness::pool::local_guest {

/// "local:" + the host name (gethostname): Guest::host and cases.host_uri of local guests.
std::string local_host_name();

/// MemAvailable of a /proc/meminfo text, in MiB (rounded down); -1 when absent.
std::int64_t mem_available_mib(const std::string& meminfo_text);

/// Online CPUs this process may run on: min(sysconf(_SC_NPROCESSORS_ONLN), sched_getaffinity count).
int online_cpus();

/// The campaign whose guests local_capacity counts as its own: by the owner records of the
/// local guests (slots.hpp), not by their names. `db` "" = a preview: none is its own yet.
struct CampaignOwner {
  std::string campaign;
  std::string db;
};

/// This machine's capacity for guests `guests`: cores, MemAvailable, which of `guests` already
/// run and which other local guests run (harness/vm/fleet.hpp, cache `cache_dir`, "" = the
/// default cache). Without `owner` (`harness vm up`), `guests` are local guest names and a
/// running guest of such a name is one of them. With `owner` (a campaign; ours, issue 59),
/// `guests` are the campaign's VM names; a running local guest whose owner.json names that
/// campaign, DB and one of them is that VM running, and every other running local guest is
/// another's ("vmK (campaign C's vmI)"), as is a slot another live runner holds while its guest
/// boots ("..., booting": slots.hpp HeldSlot): the guests of every campaign running on this
/// machine from this cache count against its cores. (Two runs started within the same moment
/// may still both judge before either claims: the claim itself is not judged again.) Throws PoolError when /proc/meminfo is unreadable.
HostCapacity local_capacity(const std::vector<std::string>& guests, const std::string& cache_dir = "",
                            const std::optional<CampaignOwner>& owner = std::nullopt);

}  // namespace harness::pool::local_guest
