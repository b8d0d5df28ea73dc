// Capacity of the hosts (libvirt_pool.hpp capacity()): what each host answers within the
// deadline (cores, memory available, active domains, hostname), folded per machine (libvirt_pool_impl.hpp).
#include "harness/pool/libvirt/libvirt_pool_impl.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace harness::pool::libvirt {

namespace {

/// Memory available for guests on `conn`'s host, KiB: virNodeGetFreeMemory plus buffers and
/// page cache (virNodeGetMemoryStats, when the driver reports them: what MemAvailable counts).
/// Throws PoolError naming `uri`.
std::int64_t available_kib(virConnectPtr conn, const std::string& uri) {
  const unsigned long long free_bytes = virNodeGetFreeMemory(conn);
  if (free_bytes == 0 && last_error_code() != VIR_ERR_OK)
    throw PoolError("libvirt " + uri + ": virNodeGetFreeMemory: " + last_error());
  std::int64_t kib = static_cast<std::int64_t>(free_bytes / 1024);
  int n = 0;
  if (virNodeGetMemoryStats(conn, VIR_NODE_MEMORY_STATS_ALL_CELLS, nullptr, &n, 0) == 0 && n > 0) {
    std::vector<virNodeMemoryStats> st(static_cast<std::size_t>(n));
    if (virNodeGetMemoryStats(conn, VIR_NODE_MEMORY_STATS_ALL_CELLS, st.data(), &n, 0) == 0)
      for (int k = 0; k < n; ++k)
        if (std::string(st[k].field) == VIR_NODE_MEMORY_STATS_BUFFERS || std::string(st[k].field) == VIR_NODE_MEMORY_STATS_CACHED)
          kib += static_cast<std::int64_t>(st[k].value);
  }
  return kib;
}

/// Names of the active domains on `conn`'s host that are not in `ours`, sorted. Throws PoolError.
std::vector<std::string> other_domains(virConnectPtr conn, const std::string& uri, const std::set<std::string>& ours) {
  virDomainPtr* doms = nullptr;
  const int nd = virConnectListAllDomains(conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
  if (nd < 0) throw PoolError("libvirt " + uri + ": cannot list its domains: " + last_error());
  std::vector<Domain> active;
  for (int k = 0; k < nd; ++k) active.emplace_back(doms[k]);
  std::free(doms);
  std::vector<std::string> out;
  for (const auto& d : active) {
    const std::string dn = virDomainGetName(d.get());
    if (!ours.count(dn)) out.push_back(dn);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// `c` (a second identity of the machine of `first`: its daemon reports the same hostname)
/// folded into `first`: an alias, its guests and running guests added, its other domains once.
void fold_alias(HostCapacity& first, const HostCapacity& c) {
  if (std::find(first.aliases.begin(), first.aliases.end(), c.host) == first.aliases.end()) first.aliases.push_back(c.host);
  first.guests.insert(first.guests.end(), c.guests.begin(), c.guests.end());
  first.running.insert(first.running.end(), c.running.begin(), c.running.end());
  for (const auto& o : c.others)  // one daemon seen twice lists the same domains
    if (std::find(first.others.begin(), first.others.end(), o) == first.others.end()) first.others.push_back(o);
  std::sort(first.others.begin(), first.others.end());
}

/// The capacity question of one host, on a connection of its own opened with `uri` (`shown`
/// in messages). Throws PoolError.
HostFacts ask_facts(const std::string& uri, const std::string& shown) {
  Conn conn = open_connection(uri, shown);
  virNodeInfo ni{};
  if (virNodeGetInfo(conn.get(), &ni) != 0) throw PoolError("libvirt " + shown + ": virNodeGetInfo: " + last_error());
  HostFacts f;
  f.cores = static_cast<int>(ni.cpus);
  f.kib = available_kib(conn.get(), shown);
  f.active = other_domains(conn.get(), shown, {});
  if (char* hn = virConnectGetHostname(conn.get())) {
    f.hostname = hn;
    std::free(hn);
  }
  return f;
}

}  // namespace

std::vector<std::string> LibvirtPool::Impl::running_among(std::size_t i, const std::vector<std::string>& active) const {
  std::vector<std::string> out;
  for (const auto& g : guests)
    if (g->host == i && std::binary_search(active.begin(), active.end(), g->domain)) out.push_back(g->name);
  return out;
}

void LibvirtPool::Impl::fill(std::size_t i, const HostFacts& f, HostCapacity& c) const {
  // Free memory already excludes what running domains take: this campaign's running guests
  // (adopted by acquire) go to `running`, every other running domain there to `others`.
  std::set<std::string> ours;
  for (const auto& g : guests) ours.insert(g->domain);
  c.cores = f.cores;
  c.memory_mib = f.kib / 1024;
  c.running = running_among(i, f.active);
  c.others.clear();
  for (const auto& d : f.active)
    if (!ours.count(d)) c.others.push_back(d);
}

std::map<std::string, BoundedResult<HostFacts>> LibvirtPool::Impl::ask_hosts() {
  std::map<std::string, std::unique_ptr<BoundedCall<HostFacts>>> calls;
  std::map<std::string, BoundedResult<HostFacts>> out;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const std::string id = identity(i);
    if (calls.count(id) || out.count(id)) continue;
    try {
      calls[id] = std::make_unique<BoundedCall<HostFacts>>(
          [open = open_uri(i), shown = hosts[i]->cfg.uri.text] { return ask_facts(open, shown); });
    } catch (const std::exception& e) {  // the ssh wrapper could not be written: this host is not asked
      out[id] = {BoundedOutcome::failed, std::nullopt, e.what()};
    }
  }
  const auto deadline = Clock::now() + std::chrono::seconds(cfg.connect_timeout_s);
  for (auto& [id, call] : calls) out[id] = call->wait_until(deadline);
  return out;
}

std::vector<HostCapacity> LibvirtPool::capacity() {
  Impl& m = *impl_;
  auto answers = m.ask_hosts();
  std::vector<HostCapacity> out;
  std::vector<std::string> machine;  // per entry of `out`: the hypervisor's hostname ("" = unknown or unreachable)
  for (std::size_t i = 0; i < m.hosts.size(); ++i) {
    HostCapacity c;
    c.host = m.identity(i);
    for (const auto& g : m.guests)
      if (g->host == i) c.guests.push_back(g->name);
    const auto& a = answers.at(c.host);
    // One identity is one host without asking it (harness/pool/README.md "Host identity").
    if (const auto same = std::find_if(out.begin(), out.end(), [&](const HostCapacity& o) { return o.host == c.host; });
        same != out.end()) {
      same->guests.insert(same->guests.end(), c.guests.begin(), c.guests.end());
      if (a.value) {  // which of this entry's guests already run (the same daemon's answer)
        const auto r = m.running_among(i, a.value->active);
        same->running.insert(same->running.end(), r.begin(), r.end());
      }
      continue;
    }
    if (!a.value) {  // not judged now; `harness run` asks again (pool.hpp)
      const bool silent = a.outcome == BoundedOutcome::no_answer;
      c.unreachable = silent ? no_answer_text(m.hosts[i]->cfg.uri, m.cfg.connect_timeout_s) : a.error;
      c.no_answer_s = silent ? m.cfg.connect_timeout_s : 0;
      out.push_back(c);
      machine.push_back("");
      continue;
    }
    m.fill(i, *a.value, c);
    // Two identities whose daemons report the same hostname (qemu:///system and a qemu+ssh URI
    // to this machine) are one host for the rule: their guests share its cores and memory.
    const std::string& name = a.value->hostname;
    const auto same = std::find(machine.begin(), machine.end(), name);
    if (name.empty() || same == machine.end()) {
      out.push_back(c);
      machine.push_back(name);
      continue;
    }
    fold_alias(out[static_cast<std::size_t>(same - machine.begin())], c);
  }
  return out;
}

}  // namespace harness::pool::libvirt
