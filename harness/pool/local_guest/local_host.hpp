#pragma once
// This machine as the hypervisor host of local guests: its name as cases record it and
// its capacity (online CPUs and MemAvailable; harness/pool/capacity.hpp judges it).
#include "harness/pool/pool.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace harness::pool::local_guest {

/// "local:" + the host name (gethostname): Guest::host and cases.host_uri of local guests.
std::string local_host_name();

/// MemAvailable of a /proc/meminfo text, in MiB (rounded down); -1 when absent.
std::int64_t mem_available_mib(const std::string& meminfo_text);

/// Online CPUs this process may run on: min(sysconf(_SC_NPROCESSORS_ONLN), sched_getaffinity count).
int online_cpus();

/// This machine's capacity for campaign guests `guests` (vm names): cores, MemAvailable,
/// which of `guests` already run and which other local guests run (harness/vm/fleet.hpp,
/// cache `cache_dir`, "" = the default cache). Throws PoolError when /proc/meminfo is unreadable.
HostCapacity local_capacity(const std::vector<std::string>& guests, const std::string& cache_dir = "");

}  // namespace harness::pool::local_guest
