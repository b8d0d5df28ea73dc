// The libvirt engine (libvirt_pool.hpp): the pool, its hosts and guests, acquire, release and
// describe; the other ideas of LibvirtPool::Impl are files of their own (libvirt_pool_impl.hpp).
#include "harness/pool/libvirt/libvirt_pool.hpp"

#include "harness/pool/agent_wait.hpp"
#include "harness/pool/libvirt/libvirt_pool_impl.hpp"
#include "harness/vm/paths.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <set>

namespace fs = std::filesystem;

namespace harness::pool::libvirt {

namespace {

std::string hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string normal_db(const std::string& db) { return db.empty() ? "" : fs::absolute(db).lexically_normal().string(); }

/// One GET /v1/health through the runner's agent client (libcurl, the guest's TLS settings),
/// not retried: the callers poll.
bool default_health(const Guest& g) {
  agent::ClientOptions co;
  co.get_attempts = 1;
  co.connect_timeout = std::chrono::milliseconds(1000);
  co.request_timeout = std::chrono::milliseconds(3000);
  try {
    return agent::AgentClient(g.url, "", g.token_file, client_options(g, co)).health().ok();  // needs no token
  } catch (const std::invalid_argument&) {
    return false;  // a URL the client refuses (plain http off loopback): never healthy; the caller's deadline says so
  }
}

}  // namespace

HostState& LibvirtPool::Impl::connect(std::size_t i) {
  HostState& h = *hosts[i];
  std::lock_guard<std::mutex> lock(h.mu);
  if (h.conn && virConnectIsAlive(h.conn.get()) == 1) return h;
  h.pool.reset();
  h.conn = open_bounded(i);
  h.pool = ensure_storage_pool(h.conn.get(), cfg.storage_pool, cfg.storage_path);
  h.pool_dir = pool_path(h.pool.get());
  return h;
}

Conn LibvirtPool::Impl::open_bounded(std::size_t i) {
  const LibvirtUri& uri = hosts[i]->cfg.uri;
  BoundedCall<Conn> call([open = open_uri(i), shown = uri.text] { return open_connection(open, shown); });
  auto r = call.wait_until(Clock::now() + std::chrono::seconds(cfg.connect_timeout_s));
  if (r.outcome == BoundedOutcome::done) return std::move(*r.value);
  throw PoolError(r.outcome == BoundedOutcome::failed ? r.error
                                                      : "libvirt " + uri.text + ": " + no_answer_text(uri, cfg.connect_timeout_s));
}

GuestState& LibvirtPool::Impl::guest(const std::string& name) {
  for (auto& g : guests)
    if (g->name == name) return *g;
  throw BootError(name, "not a guest of this libvirt pool");
}

Guest LibvirtPool::Impl::public_guest(const GuestState& g) const {
  Guest p;
  p.name = g.name;
  p.host = identity(g.host);
  p.url = "http://127.0.0.1:" + std::to_string(g.local_port);
  p.token_file = g.token_file;
  p.accelerator = g.accelerator;
  return p;
}

void LibvirtPool::Impl::destroy_domain(GuestState& g) {
  HostState& h = *hosts[g.host];
  if (Domain d{virDomainLookupByName(h.conn.get(), g.domain.c_str())}) {
    if (virDomainDestroy(d.get()) != 0 && virDomainIsActive(d.get()) == 1)
      throw PoolError("cannot destroy domain " + g.domain + " on " + h.cfg.uri.text + ": " + last_error());
    virDomainUndefine(d.get());  // only when someone made it persistent; ours are transient
  }
}

void LibvirtPool::Impl::release(GuestState& g) noexcept {
  std::lock_guard<std::mutex> lock(g.mu);
  if (g.active) {
    try {
      HostState& h = connect(g.host);
      try {
        save_console(g);
      } catch (const std::exception& e) {
        std::fprintf(out, "%s: console copy failed: %s\n", g.name.c_str(), e.what());
      }
      destroy_domain(g);
      delete_volume(h.pool.get(), disk_volume(g));
      delete_volume(h.pool.get(), console_volume(g));
      g.active = false;
    } catch (const std::exception& e) {
      std::fprintf(out, "%s: release failed: %s\n", g.name.c_str(), e.what());
    }
  }
  if (g.tunnel) g.tunnel->stop();
}

LibvirtPool::LibvirtPool(LibvirtConfig cfg, GuestShape shape, PoolHooks hooks) : impl_(std::make_unique<Impl>()) {
  if (cfg.hosts.empty()) throw std::invalid_argument("libvirt pool: no hosts");
  if (shape.vcpus < 1 || shape.memory_mib < 256) throw std::invalid_argument("libvirt pool: vcpus >= 1 and memory_mib >= 256");
  quiet_libvirt_errors();
  Impl& m = *impl_;
  m.runner_host = hostname();
  m.cfg = std::move(cfg);
  m.shape = shape;
  m.hooks = std::move(hooks);
  if (!m.hooks.io) m.hooks.io = stream_volume_io();
  if (!m.hooks.health) m.hooks.health = default_health;
  if (!m.hooks.host_accelerator) m.hooks.host_accelerator = choose_host_accelerator;
  m.cache = harness::vm::cache_root(m.cfg.cache_dir);
  for (const auto& h : m.cfg.hosts) {
    auto hs = std::make_unique<HostState>();
    hs->cfg = h;
    m.hosts.push_back(std::move(hs));
  }
  const auto names = m.cfg.guest_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto g = std::make_unique<GuestState>();
    g->name = names[i];
    g->domain = m.cfg.name_prefix + names[i];
    g->host = m.cfg.host_of(i);
    g->state_dir = (fs::path(m.cache) / "libvirt" / "guests" / g->domain).string();
    g->token_file = (fs::path(g->state_dir) / "token").string();
    g->log_dir = g->state_dir;
    m.guests.push_back(std::move(g));
  }
}

LibvirtPool::~LibvirtPool() = default;

std::vector<std::unique_ptr<Instance>> LibvirtPool::acquire(const AcquireContext& ctx) {
  Impl& m = *impl_;
  m.campaign = ctx.campaign;
  m.db = normal_db(ctx.db_path);
  m.out = ctx.out ? ctx.out : stderr;
  m.accel_request = harness::vm::effective_accel_request(ctx.accelerator, m.cfg.accelerator);
  m.destroy_extras();
  std::vector<GuestState*> boot;
  for (auto& g : m.guests) {
    fs::create_directories(g->state_dir);
    ::chmod(g->state_dir.c_str(), 0700);
    if (!m.adopt(*g)) boot.push_back(g.get());
  }
  const harness::vm::Image img = boot.empty() ? harness::vm::Image{} : m.image("");
  // Each host's accelerator before any guest boots: an explicit kvm that a host cannot
  // give is a PoolError (configuration), not a guest's boot failure.
  std::set<std::size_t> boot_hosts;
  for (GuestState* g : boot) boot_hosts.insert(g->host);
  for (std::size_t i : boot_hosts) {
    HostState& h = m.connect(i);
    m.accelerator(h, m.staged(h, img));
    if (h.cfg.uri.same_machine())
      if (const auto kvm = check_kvm_permission(m.hooks.host_root); !kvm)
        std::fprintf(m.out, "libvirt %s: warning: %s\n", h.cfg.uri.text.c_str(), kvm.error().message.c_str());
  }
  // Each guest's wait begins at its own start, so that the next guest's start (a minute when
  // libvirt probes qemu again: slow_start.hpp) is not counted in its boot-to-ready.
  std::vector<std::future<double>> waits;
  std::optional<BootError> first;
  for (GuestState* g : boot) {
    m.new_token(*g);
    g->log_dir = g->state_dir;
    try {
      m.start(*g, img, {}, true);
    } catch (const BootError& e) {
      first.emplace(e);
      break;
    }
    waits.push_back(std::async(std::launch::async, [&m, g] { return m.wait_ready(*g); }));
  }
  for (std::size_t i = 0; i < waits.size(); ++i) {
    try {
      const double s = waits[i].get();
      const BootResult b = m.finish_boot(*boot[i], s);
      boot[i]->unused = true;
      std::fprintf(m.out, "%s: ready in %.1f s (boot-to-ready, %s) on %s at http://127.0.0.1:%d\n", boot[i]->name.c_str(), s,
                   boot[i]->accelerator.c_str(), m.hosts[boot[i]->host]->cfg.uri.text.c_str(), boot[i]->local_port);
      if (!b.note.empty()) std::fprintf(m.out, "%s: %s\n", boot[i]->name.c_str(), b.note.c_str());
    } catch (const BootError& e) {
      if (!first) first.emplace(e);
    }
  }
  if (first) throw *first;
  std::vector<std::unique_ptr<Instance>> out;
  for (const auto& g : m.guests) out.push_back(std::make_unique<Impl::LibvirtGuest>(m, *g));
  return out;
}

void LibvirtPool::release() noexcept {
  for (auto& g : impl_->guests) impl_->release(*g);
}

void LibvirtPool::release_orphans(const AcquireContext& ctx) noexcept {
  std::FILE* out = ctx.out ? ctx.out : stderr;
  try {
    const auto gone = libvirt_down(impl_->cfg, ctx.campaign, ctx.db_path, false, out);
    if (!gone.empty())
      std::fprintf(out, "libvirt: stopped %zu domain(s) an earlier runner of campaign %s left running (nothing left to run)\n",
                   gone.size(), ctx.campaign.c_str());
  } catch (const std::exception& e) {
    std::fprintf(out, "libvirt: could not stop what an earlier runner left: %s\n", e.what());
  }
}

std::string LibvirtPool::describe() const {
  const Impl& m = *impl_;
  std::string s = "engine libvirt: " + std::to_string(m.guests.size()) + " guest(s) on ";
  for (std::size_t i = 0; i < m.hosts.size(); ++i) {
    std::string names;
    for (const auto& g : m.guests)
      if (g->host == i) names += (names.empty() ? "" : ", ") + g->name;
    HostState& h = *m.hosts[i];
    std::string accel;
    {
      std::lock_guard<std::mutex> lock(h.mu);
      if (h.accel) accel = "; " + h.accel->accelerator + ": " + h.accel->reason;
    }
    if (accel.empty()) {  // adopted guests only: as their owner records say
      std::set<std::string> a;
      for (const auto& g : m.guests)
        if (g->host == i && !g->accelerator.empty()) a.insert(g->accelerator);
      for (const auto& x : a) accel += (accel.empty() ? "; " : ", ") + x;
      if (!accel.empty()) accel += " as adopted";
    }
    s += (i ? "; " : "") + h.cfg.uri.text + " (" + names + accel + ")";
  }
  if (m.accel_request.empty())
    s += ", accelerator request " + m.cfg.accelerator + " (decided per host when the guests boot: kvm when the host "
         "offers it and a trial boot works, else tcg)";
  s += m.cfg.fresh_guest_per_case ? ", a fresh domain per case" : ", one domain per guest for the whole run";
  return s;
}

std::string LibvirtPool::live_domain_xml(const std::string& name) {
  Impl& m = *impl_;
  GuestState& g = m.guest(name);
  HostState& h = m.connect(g.host);
  Domain d(virDomainLookupByName(h.conn.get(), g.domain.c_str()));
  if (!d) throw PoolError("guest " + name + " has no domain " + g.domain + " on " + h.cfg.uri.text);
  return take_string(virDomainGetXMLDesc(d.get(), 0));
}

std::optional<BootResult> LibvirtPool::last_boot(const std::string& name) const {
  for (const auto& g : impl_->guests)
    if (g->name == name) return g->last;
  return std::nullopt;
}

std::vector<std::string> LibvirtPool::uploads() const {
  std::lock_guard<std::mutex> lock(impl_->uploads_mu);
  return impl_->uploads;
}

}  // namespace harness::pool::libvirt
