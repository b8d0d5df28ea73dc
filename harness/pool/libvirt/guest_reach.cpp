// Ports and tunnels: the hypervisor loopback port a guest's agent is forwarded to, and the ssh
// tunnel that brings it here for a remote hypervisor (libvirt_pool_impl.hpp; tunnel.hpp).
#include "harness/pool/libvirt/libvirt_pool_impl.hpp"

#include "harness/vm/qemu.hpp"

#include <filesystem>
#include <random>

namespace fs = std::filesystem;

namespace harness::pool::libvirt {

int LibvirtPool::Impl::pick_port(const HostState& h) {
  if (h.cfg.uri.same_machine()) return harness::vm::free_local_port();
  // A remote hypervisor's free ports cannot be probed from here: a random port outside
  // Linux's ephemeral range; a taken one fails the domain start, which picks again.
  static thread_local std::mt19937 rng(std::random_device{}());
  return std::uniform_int_distribution<int>(20000, 29999)(rng);
}

void LibvirtPool::Impl::reach(GuestState& g) {
  const HostState& h = *hosts[g.host];
  if (!h.cfg.uri.tunnel()) {
    g.local_port = g.forward_port;
    return;
  }
  if (g.tunnel && g.tunnel->running() && g.tunnel_remote == g.forward_port) return;
  const std::string log = (fs::path(g.state_dir) / "tunnel.log").string();
  const int keep = g.local_port;
  if (g.tunnel) g.tunnel->stop();
  std::string last;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const int lp = keep > 0 && attempt == 0 ? keep : harness::vm::free_local_port();
    try {
      g.tunnel.emplace(h.cfg.uri, lp, g.forward_port, log);
      g.local_port = lp;
      g.tunnel_remote = g.forward_port;
      return;
    } catch (const PoolError& e) {
      last = e.what();
      g.tunnel.reset();
      if (keep > 0) break;  // the URL the runner holds must not change
    }
  }
  throw PoolError(last);
}

}  // namespace harness::pool::libvirt
