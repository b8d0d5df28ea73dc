// This machine as a hypervisor host (see local_host.hpp).
#include "harness/pool/local_guest/local_host.hpp"

#include "harness/pool/local_guest/owner.hpp"
#include "harness/pool/local_guest/slots.hpp"
#include "harness/vm/fleet.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace harness::pool::local_guest {

std::string local_host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "local:localhost";
  return std::string("local:") + buf;
}

std::int64_t mem_available_mib(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream f(line.substr(13));
    long long kib = -1;
    std::string unit;
    if (f >> kib >> unit && unit == "kB" && kib >= 0) return kib / 1024;
    return -1;
  }
  return -1;
}

int online_cpus() {
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) n = std::min<long>(n > 0 ? n : CPU_COUNT(&set), CPU_COUNT(&set));
  return n > 0 ? static_cast<int>(n) : 0;
}

HostCapacity local_capacity(const std::vector<std::string>& guests, const std::string& cache_dir,
                            const std::optional<CampaignOwner>& owner) {
  HostCapacity h;
  h.host = local_host_name();
  h.cores = online_cpus();
  std::ifstream in("/proc/meminfo");
  std::ostringstream os;
  os << in.rdbuf();
  if (!in && os.str().empty()) throw PoolError("/proc/meminfo: cannot read (local-qemu capacity)");
  h.memory_mib = std::max<std::int64_t>(0, mem_available_mib(os.str()));
  h.guests = guests;
  for (const auto& g : harness::vm::fleet_list(cache_dir)) {
    if (!g.running) continue;
    if (!owner) {
      if (std::find(guests.begin(), guests.end(), g.name) != guests.end()) h.running.push_back(g.name);
      else h.others.push_back(g.name);
      continue;
    }
    const auto o = read_guest_owner(g.state_dir);
    const std::string vm = o ? served_vm(o->guest, g.name) : "";
    if (!owner->db.empty() && owned_by(o, owner->campaign, owner->db) &&
        std::find(guests.begin(), guests.end(), vm) != guests.end())
      h.running.push_back(vm);
    else
      h.others.push_back(o ? g.name + " (campaign " + o->campaign + "'s " + vm + ")" : g.name);
  }
  if (owner)  // another runner's guest that does not run yet (booting) takes its core too
    for (const auto& s : held_not_running(cache_dir))
      if (owner->db.empty() || !owned_by(GuestOwner{s.campaign, s.db}, owner->campaign, owner->db))
        h.others.push_back(s.guest + " (campaign " + s.campaign + "'s " + s.vm + ", booting)");
  return h;
}

}  // namespace harness::pool::local_guest
