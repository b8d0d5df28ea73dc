// Ownership and adoption: the owner record of a domain, adopting a running domain of this
// campaign and DB, destroying this campaign's domains of guests it no longer has (libvirt_pool_impl.hpp).
#include "harness/pool/libvirt/libvirt_pool_impl.hpp"

#include "harness/digest/sha256.hpp"
#include "harness/kernel/wall_clock.hpp"
#include "harness/vm/paths.hpp"

#include <unistd.h>

#include <cstdlib>
#include <set>
#include <thread>

namespace harness::pool::libvirt {

OwnerRecord LibvirtPool::Impl::owner(const GuestState& g) const {
  OwnerRecord o;
  o.campaign = campaign;
  o.db = db;
  o.runner_host = runner_host;
  o.runner_pid = static_cast<int>(::getpid());
  o.guest = g.name;
  o.forward_port = g.forward_port;
  o.token_sha256 = g.token_sha256;
  o.image_sha256 = g.image_sha256;
  o.accelerator = g.accelerator;
  o.accelerator_reason = g.accelerator_reason;
  o.since_unix_ns = harness::kernel::unix_now_ns();
  return o;
}

bool LibvirtPool::Impl::adopt(GuestState& g) {
  HostState& h = connect(g.host);
  Domain d(virDomainLookupByName(h.conn.get(), g.domain.c_str()));
  if (!d) return false;
  const std::string where = g.domain + " on " + h.cfg.uri.text;
  const std::string md = take_string(virDomainGetMetadata(d.get(), VIR_DOMAIN_METADATA_ELEMENT, kOwnerNamespace, 0));
  const auto o = parse_owner_xml(md);
  if (!o)
    throw PoolError("domain " + where + " exists and has no reclaim-harness owner record (it was not started by the "
                    "harness): remove it or choose another provider.name_prefix");
  if (o->campaign != campaign || o->db != db)
    throw PoolError("domain " + where + " belongs to campaign '" + o->campaign + "' (DB " + o->db + ", runner pid " +
                    std::to_string(o->runner_pid) + " on " + o->runner_host + "), not to '" + campaign + "' (DB " + db +
                    "): stop that campaign's guests first (harness vm down for libvirt) or choose another "
                    "provider.name_prefix");
  if (o->runner_host != runner_host)
    throw PoolError("domain " + where + " of campaign '" + campaign + "' was started by a runner on host " +
                    o->runner_host + " (pid " + std::to_string(o->runner_pid) +
                    "), not on this one: that runner may still be running");
  int state = 0, reason = 0;
  const bool running = virDomainGetState(d.get(), &state, &reason, 0) == 0 &&
                       (state == VIR_DOMAIN_RUNNING || state == VIR_DOMAIN_BLOCKED || state == VIR_DOMAIN_PAUSED);
  std::string token;
  try {
    token = harness::vm::read_file(g.token_file);
  } catch (const std::exception&) {
    // no token file: token_ok is false below, so the domain is not adopted
  }
  const bool token_ok = !token.empty() && harness::digest::sha256_hex(token) == o->token_sha256;
  if (running && token_ok && o->forward_port > 0) {
    g.forward_port = o->forward_port;
    g.token_sha256 = o->token_sha256;
    g.accelerator = o->accelerator;
    g.accelerator_reason = o->accelerator_reason;
    g.image_sha256 = o->image_sha256;
    g.active = true;
    bool ok = false;
    try {
      reach(g);
      const Guest pub = public_guest(g);
      const auto t0 = Clock::now();
      while (!(ok = hooks.health(pub)) && Clock::now() - t0 < std::chrono::seconds(hooks.adopt_health_timeout_s))
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    } catch (const std::exception& e) {
      std::fprintf(out, "%s: cannot reach the agent of %s: %s\n", g.name.c_str(), where.c_str(), e.what());
    }
    if (ok) {
      OwnerRecord rec = owner(g);
      const std::string xml = owner_xml(rec);
      virDomainSetMetadata(d.get(), VIR_DOMAIN_METADATA_ELEMENT, xml.c_str(), kOwnerPrefix, kOwnerNamespace,
                           VIR_DOMAIN_AFFECT_LIVE);
      std::fprintf(out, "%s: adopted domain %s (left by runner pid %d of this campaign)\n", g.name.c_str(), where.c_str(),
                   o->runner_pid);
      return true;
    }
  }
  std::fprintf(out, "%s: domain %s of this campaign's earlier runner (pid %d) %s; destroying it and booting again\n",
               g.name.c_str(), where.c_str(), o->runner_pid,
               !running ? "is not running" : !token_ok ? "has a token this runner does not hold" : "does not answer");
  if (virDomainDestroy(d.get()) != 0 && virDomainIsActive(d.get()) == 1)
    throw PoolError("cannot destroy domain " + where + ": " + last_error());
  g.active = false;
  return false;
}

void LibvirtPool::Impl::destroy_extras() {
  std::set<std::string> ours;
  for (const auto& g : guests) ours.insert(g->domain);
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    HostState& h = connect(i);
    virDomainPtr* doms = nullptr;
    const int n = virConnectListAllDomains(h.conn.get(), &doms, 0);
    if (n < 0) throw PoolError("cannot list the domains of " + h.cfg.uri.text + ": " + last_error());
    std::vector<Domain> all;
    for (int k = 0; k < n; ++k) all.emplace_back(doms[k]);
    std::free(doms);
    for (auto& d : all) {
      const std::string name = virDomainGetName(d.get());
      if (name.rfind(cfg.name_prefix, 0) != 0 || ours.count(name)) continue;
      const auto o = parse_owner_xml(take_string(virDomainGetMetadata(d.get(), VIR_DOMAIN_METADATA_ELEMENT, kOwnerNamespace, 0)));
      if (!o || o->campaign != campaign || o->db != db) continue;
      std::fprintf(out, "libvirt %s: destroying domain %s (guest %s is no longer in the campaign)\n", h.cfg.uri.text.c_str(),
                   name.c_str(), o->guest.c_str());
      virDomainDestroy(d.get());
    }
  }
}

}  // namespace harness::pool::libvirt
