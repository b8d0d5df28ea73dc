// The libvirt engine (libvirt_pool.hpp).
#include "harness/pool/libvirt/libvirt_pool.hpp"

#include "harness/agent/token.hpp"
#include "harness/digest/sha256.hpp"
#include "harness/kernel/wall_clock.hpp"
#include "harness/pool/agent_wait.hpp"
#include "harness/pool/host_costs.hpp"
#include "harness/pool/host_identity.hpp"
#include "harness/pool/libvirt/domain_xml.hpp"
#include "harness/pool/libvirt/host_accel.hpp"
#include "harness/pool/libvirt/image_staging.hpp"
#include "harness/pool/libvirt/tunnel.hpp"
#include "harness/pool/libvirt/virt.hpp"
#include "harness/vm/accel.hpp"
#include "harness/vm/image.hpp"
#include "harness/vm/paths.hpp"
#include "harness/vm/qemu.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace harness::pool::libvirt {

namespace {

constexpr std::uint64_t kConsoleCopyBytes = 16ull << 20;  // a console longer than this keeps its tail

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

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string tail_of(const std::string& s, std::size_t n) { return s.size() > n ? s.substr(s.size() - n) : s; }

}  // namespace

// Impl's state per host and per guest: outside the anonymous namespace, as Impl (a member of
// an exported class) holds them (-Wsubobject-linkage).
struct HostState {
  LibvirtHost cfg;
  Conn conn;
  StoragePool pool;
  std::string pool_dir;
  std::optional<HostAccel> accel;
  std::map<std::string, StagedImage> images;  // by image sha256
  std::mutex mu;                              // connection setup, staging, accelerator
};

struct GuestState {
  std::string name, domain;
  std::size_t host = 0;
  std::string state_dir, token_file, token_sha256;
  int forward_port = 0;  // hypervisor loopback port
  int local_port = 0;    // port of the URL here
  std::optional<SshTunnel> tunnel;
  int tunnel_remote = 0; // hypervisor port the tunnel leads to
  std::string log_dir;   // where this boot's console copy and domain.xml go
  std::string image_sha256;
  std::string accelerator, accelerator_reason;
  std::optional<BootResult> last;
  bool active = false;   // booted or adopted by this pool
  bool unused = false;   // booted by acquire() with the default image and no case since
  Clock::time_point started;
  double start_s = -1;       // virDomainCreateXML of the last boot, seconds
  std::uint64_t log_from = 0;  // libvirtd log size before that start (this machine)
  std::mutex mu;
};

struct LibvirtPool::Impl {
  LibvirtConfig cfg;
  GuestShape shape;
  PoolHooks hooks;
  std::string cache;
  std::vector<std::unique_ptr<HostState>> hosts;
  std::vector<std::unique_ptr<GuestState>> guests;
  std::string campaign, db, runner_host = hostname();
  std::string accel_request;
  std::FILE* out = stderr;
  mutable std::mutex uploads_mu;
  std::vector<std::string> uploads;

  VolumeIo& io() { return *hooks.io; }

  HostState& connect(std::size_t i) {
    HostState& h = *hosts[i];
    std::lock_guard<std::mutex> lock(h.mu);
    if (h.conn && virConnectIsAlive(h.conn.get()) == 1) return h;
    h.pool.reset();
    h.conn = open_connection(h.cfg.uri.text);
    h.pool = ensure_storage_pool(h.conn.get(), cfg.storage_pool, cfg.storage_path);
    h.pool_dir = pool_path(h.pool.get());
    return h;
  }

  GuestState& guest(const std::string& name) {
    for (auto& g : guests)
      if (g->name == name) return *g;
    throw BootError(name, "not a guest of this libvirt pool");
  }

  /// Host entry i's identity (harness/pool/host_identity.hpp): Guest::host, the capacity
  /// table's and the cost files' name of the host.
  std::string identity(std::size_t i) const { return host_identity(hosts[i]->cfg.uri.text); }

  Guest public_guest(const GuestState& g) const {
    Guest p;
    p.name = g.name;
    p.host = identity(g.host);
    p.url = "http://127.0.0.1:" + std::to_string(g.local_port);
    p.token_file = g.token_file;
    p.accelerator = g.accelerator;
    return p;
  }

  harness::vm::Image image(const std::string& dir) {
    if (!dir.empty()) return harness::vm::load_image_dir(dir);
    if (!hooks.default_image_dir.empty()) return harness::vm::load_image_dir(hooks.default_image_dir);
    return harness::vm::load_image(cfg.cache_dir);
  }

  StagedImage staged(HostState& h, const harness::vm::Image& img) {
    std::lock_guard<std::mutex> lock(h.mu);
    if (auto it = h.images.find(img.sha256); it != h.images.end()) return it->second;
    // The claim first: a `vm down --images` of another campaign running meanwhile keeps the image.
    if (!campaign.empty()) claim_image(h.pool.get(), img.sha256, campaign, db);
    const auto t0 = Clock::now();
    StagedImage s = stage_image(h.conn.get(), h.pool.get(), io(), img, cache);
    if (!s.uploaded.empty())
      record_upload("libvirt", host_identity(h.cfg.uri.text), std::chrono::duration<double>(Clock::now() - t0).count());
    {
      std::lock_guard<std::mutex> ul(uploads_mu);
      for (const auto& u : s.uploaded) uploads.push_back(u + " on " + h.cfg.uri.text);
    }
    if (!s.uploaded.empty())
      std::fprintf(out, "libvirt %s: uploaded image %s (%zu volumes)\n", h.cfg.uri.text.c_str(), img.sha256.substr(0, 16).c_str(),
                   s.uploaded.size());
    h.images[img.sha256] = s;
    return s;
  }

  /// The key of h's cached KVM verdict (harness/vm/accel.hpp ProbeKey: the rule local guests
  /// use): the host's identity; its libvirt version and what its kvm domain capabilities say
  /// (a digest: they change when /dev/kvm appears or goes; a remote host's boot id is not
  /// known); its qemu (version and emulator path); the image (content-addressed: its hash
  /// covers the kernel).
  harness::vm::ProbeKey probe_key(HostState& h, const StagedImage& img) {
    harness::vm::ProbeKey k;
    k.host = host_identity(h.cfg.uri.text);
    unsigned long lib = 0, hv = 0;
    if (virConnectGetLibVersion(h.conn.get(), &lib) == 0) k.hypervisor = "libvirt " + std::to_string(lib);
    const std::string kvm = take_string(virConnectGetDomainCapabilities(h.conn.get(), nullptr, "x86_64", "q35", "kvm", 0));
    k.hypervisor += " kvm-caps " + (kvm.empty() ? std::string("none") : harness::digest::sha256_hex(kvm).substr(0, 16));
    if (virConnectGetVersion(h.conn.get(), &hv) == 0) k.qemu = "qemu " + std::to_string(hv);
    const std::string caps =
        kvm.empty() ? take_string(virConnectGetDomainCapabilities(h.conn.get(), nullptr, "x86_64", "q35", nullptr, 0)) : kvm;
    if (const auto a = caps.find("<path>"), b = caps.find("</path>"); a != std::string::npos && b != std::string::npos && b > a)
      k.qemu += " " + caps.substr(a + 6, b - a - 6);
    k.kernel_sha256 = img.sha256;
    return k;
  }

  HostAccel accelerator(HostState& h, const StagedImage& img) {
    std::lock_guard<std::mutex> lock(h.mu);
    if (h.accel) return *h.accel;
    TrialBoot t;
    t.conn = h.conn.get();
    t.pool = h.pool.get();
    t.io = &io();
    t.kernel = img.kernel;
    t.domain_name = cfg.name_prefix + "kvm-trial";
    if (h.cfg.uri.same_machine()) t.host_root = "/";  // this machine's /dev/kvm: what it says first
    // The verdict of an earlier run with the same key (local guests' rule, accel.hpp): an auto
    // request takes it either way, an explicit kvm only a kvm verdict (a failure is tried
    // again and reported); tcg never tries.
    const harness::vm::ProbeKey key = probe_key(h, img);
    const std::string file = (std::filesystem::path(host_costs_dir()) / key.file_name()).string();
    const auto cached = accel_request == "tcg" ? std::nullopt : harness::vm::read_probe_verdict(file, key);
    if (cached && (accel_request == "auto" || cached->kvm_ok)) {
      h.accel = HostAccel{cached->kvm_ok ? "kvm" : "tcg",
                          cached->detail + "; cached verdict of " + utc_date(cached->measured_unix) + ", same host, libvirt, "
                          "qemu and image"};
    } else {
      const auto t0 = Clock::now();
      h.accel = hooks.host_accelerator(t, accel_request);
      const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
      if (accel_request != "tcg") {
        const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                                     std::chrono::system_clock::now().time_since_epoch()).count();
        harness::vm::write_probe_verdict(file, key, {h.accel->accelerator == "kvm", h.accel->reason, secs, now});
        record_kvm_trial("libvirt", key.host, secs);
      }
    }
    std::fprintf(out, "libvirt %s: accelerator: %s (%s)\n", h.cfg.uri.text.c_str(), h.accel->accelerator.c_str(),
                 h.accel->reason.c_str());
    if (h.accel->accelerator == "tcg") std::fprintf(out, "%s\n", harness::vm::tcg_warning().c_str());
    return *h.accel;
  }

  int pick_port(const HostState& h) {
    if (h.cfg.uri.same_machine()) return harness::vm::free_local_port();
    // A remote hypervisor's free ports cannot be probed from here: a random port outside
    // Linux's ephemeral range; a taken one fails the domain start, which picks again.
    static thread_local std::mt19937 rng(std::random_device{}());
    return std::uniform_int_distribution<int>(20000, 29999)(rng);
  }

  /// Makes g.local_port reach the hypervisor's g.forward_port (tunnel for ssh URIs).
  void reach(GuestState& g) {
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

  OwnerRecord owner(const GuestState& g) const {
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

  std::string console_volume(const GuestState& g) const { return g.domain + "-console.log"; }
  std::string disk_volume(const GuestState& g) const { return g.domain + "-disk.img"; }

  /// Downloads the console into g.log_dir/console.log. Returns its text ("" when none yet).
  std::string save_console(GuestState& g) {
    HostState& h = *hosts[g.host];
    if (!h.pool) return "";
    virStoragePoolRefresh(h.pool.get(), 0);
    Volume v = find_volume(h.pool.get(), console_volume(g));
    if (!v) return "";
    std::string text = io().read_tail(h.conn.get(), v.get(), kConsoleCopyBytes);
    if (!g.log_dir.empty()) write_text(fs::path(g.log_dir) / "console.log", text);
    return text;
  }

  std::string console_tail(GuestState& g, std::size_t n) {
    try {
      return tail_of(save_console(g), n);
    } catch (const std::exception& e) {
      return std::string("console unavailable: ") + e.what();
    }
  }

  void destroy_domain(GuestState& g) {
    HostState& h = *hosts[g.host];
    if (Domain d{virDomainLookupByName(h.conn.get(), g.domain.c_str())}) {
      if (virDomainDestroy(d.get()) != 0 && virDomainIsActive(d.get()) == 1)
        throw PoolError("cannot destroy domain " + g.domain + " on " + h.cfg.uri.text + ": " + last_error());
      virDomainUndefine(d.get());  // only when someone made it persistent; ours are transient
    }
  }

  /// Fresh disk, domain definition and start. Sets g.started. Throws BootError.
  void start(GuestState& g, const harness::vm::Image& img, const std::vector<std::string>& cmdline, bool may_change_port) {
    try {
      HostState& h = connect(g.host);
      const StagedImage si = staged(h, img);
      const HostAccel acc = accelerator(h, si);
      g.accelerator = acc.accelerator;
      g.accelerator_reason = acc.reason;
      g.image_sha256 = img.sha256;

      Volume base = find_volume(h.pool.get(), si.disk_volume);
      if (!base) throw PoolError("volume " + si.disk_volume + " vanished from storage pool " + cfg.storage_pool);
      Volume disk = clone_volume(h.pool.get(), base.get(), disk_volume(g));
      const std::string token = harness::vm::read_file(g.token_file);
      if (token.size() != kTokenFileBytes)
        throw PoolError("token file " + g.token_file + " has " + std::to_string(token.size()) + " bytes, not " +
                        std::to_string(kTokenFileBytes));
      io().write_at(h.conn.get(), disk.get(), si.token_offset, token);
      delete_volume(h.pool.get(), console_volume(g));

      harness::vm::QemuConfig qc;  // the kernel command line local guests get
      qc.name = g.name;
      qc.accelerator = acc.accelerator;
      qc.swapfile_mib = shape.swapfile_mib;
      qc.extra_cmdline = cmdline;
      DomainSpec s;
      s.name = g.domain;
      s.type = acc.accelerator == "kvm" ? "kvm" : "qemu";
      s.vcpus = shape.vcpus;
      s.memory_mib = shape.memory_mib;
      s.kernel = si.kernel;
      s.initrd = si.initrd;
      s.cmdline = harness::vm::guest_kernel_cmdline(qc);
      s.disk = volume_path(disk.get());
      s.console_log = h.pool_dir + "/" + console_volume(g);
      std::string err;
      for (int attempt = 0; attempt < 5; ++attempt) {
        if (g.forward_port == 0 || (attempt > 0 && may_change_port)) g.forward_port = pick_port(h);
        s.forward_port = g.forward_port;
        s.owner = owner(g);
        const std::string xml = domain_xml(s);
        if (h.cfg.uri.same_machine()) g.log_from = log_size(hooks.libvirtd_log);
        g.started = Clock::now();
        Domain d(virDomainCreateXML(h.conn.get(), xml.c_str(), 0));
        g.start_s = std::chrono::duration<double>(Clock::now() - g.started).count();
        if (d) {
          g.active = true;
          return;
        }
        err = last_error();
        const bool port_taken = err.find("host forwarding") != std::string::npos || err.find("hostfwd") != std::string::npos;
        if (!port_taken || !may_change_port) break;
      }
      throw PoolError("libvirt could not start domain " + g.domain + " on " + h.cfg.uri.text + ": " + err);
    } catch (const BootError&) {
      throw;
    } catch (const std::exception& e) {
      throw BootError(g.name, e.what(), console_tail(g, 4096));
    }
  }

  /// Waits for the agent after start(); returns boot-to-ready seconds. Throws BootError.
  double wait_ready(GuestState& g) {
    const HostState& h = *hosts[g.host];
    try {
      reach(g);
    } catch (const std::exception& e) {
      throw BootError(g.name, e.what(), console_tail(g, 4096));
    }
    const Guest pub = public_guest(g);
    for (;;) {
      if (hooks.health(pub)) return std::chrono::duration<double>(Clock::now() - g.started).count();
      const double el = std::chrono::duration<double>(Clock::now() - g.started).count();
      int state = 0, reason = 0;
      Domain d(virDomainLookupByName(h.conn.get(), g.domain.c_str()));
      if (!d || (virDomainGetState(d.get(), &state, &reason, 0) == 0 &&
                 (state == VIR_DOMAIN_SHUTOFF || state == VIR_DOMAIN_CRASHED)))
        throw BootError(g.name, "domain " + g.domain + " on " + h.cfg.uri.text + " stopped " +
                                    std::to_string(static_cast<int>(el)) + " s after its start, before its agent answered",
                        console_tail(g, 4096));
      if (g.tunnel && !g.tunnel->running())
        throw BootError(g.name, "the ssh tunnel to " + h.cfg.uri.text + " exited (log: " + g.state_dir + "/tunnel.log)",
                        console_tail(g, 4096));
      if (el > cfg.boot_timeout_s)
        throw BootError(g.name, "agent of domain " + g.domain + " on " + h.cfg.uri.text + " not answering " +
                                    pub.url + "/v1/health within " + std::to_string(cfg.boot_timeout_s) + " s",
                        console_tail(g, 4096));
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }

  /// Copies the console and the domain XML libvirt runs into g.log_dir.
  void keep_evidence(GuestState& g) {
    try {
      save_console(g);
      HostState& h = *hosts[g.host];
      if (Domain d{virDomainLookupByName(h.conn.get(), g.domain.c_str())})
        if (!g.log_dir.empty()) write_text(fs::path(g.log_dir) / "domain.xml", take_string(virDomainGetXMLDesc(d.get(), 0)));
    } catch (const std::exception& e) {
      std::fprintf(out, "%s: console copy failed: %s\n", g.name.c_str(), e.what());
    }
  }

  BootResult finish_boot(GuestState& g, double secs) {
    record_boot("libvirt", identity(g.host), g.accelerator, secs);
    BootResult r;
    r.boot_to_ready_s = secs;
    r.accelerator = g.accelerator;
    r.accelerator_reason = g.accelerator_reason;
    if (!g.log_dir.empty()) r.console_log = (fs::path(g.log_dir) / "console.log").string();
    if (start_dominates(g.start_s, secs)) {
      const HostState& h = *hosts[g.host];
      const auto causes = h.cfg.uri.same_machine() ? local_slow_start_causes(hooks.host_root, hooks.libvirtd_log, g.log_from)
                                                   : std::vector<std::string>{};
      r.note = slow_start_note(g.domain, h.cfg.uri.text, g.start_s, secs, causes);
    }
    keep_evidence(g);
    g.last = r;
    return r;
  }

  void new_token(GuestState& g) {
    const std::string t = harness::agent::random_token() + "\n";
    harness::vm::write_file(g.token_file, t, 0600);
    g.token_sha256 = harness::digest::sha256_hex(t);
  }

  /// Adopts g's running domain when it is this campaign's and answers. Throws PoolError for
  /// a domain of anyone else. Returns false when there is nothing to adopt (destroyed or none).
  bool adopt(GuestState& g) {
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

  /// g's fresh boot for a case (libvirt_pool.hpp "Instances"). Throws BootError.
  BootResult fresh_boot(GuestState& g, const BootRequest& r) {
    std::lock_guard<std::mutex> lock(g.mu);
    harness::vm::Image img;
    const bool unused = g.unused;
    g.unused = false;
    try {
      img = image(r.image_dir);
      HostState& h = connect(g.host);
      if (unused && g.last && r.cmdline.empty() && img.sha256 == g.image_sha256) {
        Domain d(virDomainLookupByName(h.conn.get(), g.domain.c_str()));
        if (d && virDomainIsActive(d.get()) == 1) {
          g.log_dir = r.log_dir.empty() ? g.state_dir : r.log_dir;
          keep_evidence(g);
          BootResult b = *g.last;
          b.console_log = (fs::path(g.log_dir) / "console.log").string();
          char note[160];
          std::snprintf(note, sizeof note,
                        "the domain booted at acquire (%.1f s boot-to-ready, no case since) serves this case: not booted twice",
                        b.boot_to_ready_s);
          b.note = note;
          return b;
        }
      }
      if (g.active) {
        try {
          save_console(g);  // the previous boot's console stays with the previous attempt
        } catch (const std::exception& e) {
          std::fprintf(out, "%s: console copy failed: %s\n", g.name.c_str(), e.what());
        }
      }
      destroy_domain(g);
      if (g.token_sha256.empty()) new_token(g);
    } catch (const BootError&) {
      throw;
    } catch (const std::exception& e) {
      throw BootError(g.name, e.what());
    }
    g.log_dir = r.log_dir.empty() ? g.state_dir : r.log_dir;
    // A tunnelled guest may move to another hypervisor port (its URL here stays the same).
    start(g, img, r.cmdline, hosts[g.host]->cfg.uri.tunnel());
    const double s = wait_ready(g);
    return finish_boot(g, s);
  }

  /// From virDomainGetState (libvirt_pool.hpp "Instances").
  Liveness liveness(GuestState& g) noexcept {
    try {
      HostState& h = connect(g.host);
      Domain d(virDomainLookupByName(h.conn.get(), g.domain.c_str()));
      if (!d) return last_error_code() == VIR_ERR_NO_DOMAIN ? Liveness::Gone : Liveness::Unknown;
      int state = 0, reason = 0;
      if (virDomainGetState(d.get(), &state, &reason, 0) != 0)
        return last_error_code() == VIR_ERR_NO_DOMAIN ? Liveness::Gone : Liveness::Unknown;
      switch (state) {
        case VIR_DOMAIN_RUNNING:
        case VIR_DOMAIN_BLOCKED:
        case VIR_DOMAIN_PAUSED:
        case VIR_DOMAIN_PMSUSPENDED:
          return Liveness::Running;
        case VIR_DOMAIN_SHUTOFF:
        case VIR_DOMAIN_CRASHED:
          return Liveness::Gone;
        default:
          return Liveness::Unknown;
      }
    } catch (const std::exception&) {
      return Liveness::Unknown;
    }
  }

  /// The console's last `max_bytes` (libvirt_pool.hpp "Instances").
  std::string diagnose(GuestState& g, std::size_t max_bytes) noexcept {
    try {
      connect(g.host);
      return tail_of(save_console(g), max_bytes);
    } catch (const std::exception& e) {
      return std::string("console unavailable: ") + e.what();
    }
  }

  /// Destroys g's domain when this pool booted or adopted it, deletes its disk and console
  /// volumes (console copied first) and stops its tunnel. Never throws.
  void release(GuestState& g) noexcept {
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

  /// Host entry i's guests whose domains are active there. Throws (connection, PoolError).
  std::vector<std::string> running_guests(std::size_t i);

  /// Fills c's cores, memory, running guests and other domains from host entry i; returns
  /// the hostname its daemon reports ("" when it does not say). Throws when it cannot be asked.
  std::string ask_host(std::size_t i, HostCapacity& c);

  /// Destroys this campaign's domains of guests it no longer has, on every host.
  void destroy_extras() {
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

  /// One guest of this pool (pool.hpp Instance): its operations are the pool's on its state.
  class LibvirtGuest : public Instance {
   public:
    LibvirtGuest(Impl& m, GuestState& g) : Instance(m.public_guest(g), m.cfg.fresh_guest_per_case), m_(m), g_(g) {}
    BootResult fresh_boot(const BootRequest& r) override { return m_.fresh_boot(g_, r); }
    Liveness liveness() override { return m_.liveness(g_); }
    std::string diagnose(std::size_t max_bytes) override { return m_.diagnose(g_, max_bytes); }
    void release() noexcept override { m_.release(g_); }

   private:
    Impl& m_;
    GuestState& g_;
  };
};

LibvirtPool::LibvirtPool(LibvirtConfig cfg, GuestShape shape, PoolHooks hooks) : impl_(std::make_unique<Impl>()) {
  if (cfg.hosts.empty()) throw std::invalid_argument("libvirt pool: no hosts");
  if (shape.vcpus < 1 || shape.memory_mib < 256) throw std::invalid_argument("libvirt pool: vcpus >= 1 and memory_mib >= 256");
  quiet_libvirt_errors();
  Impl& m = *impl_;
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

}  // namespace

std::vector<std::string> LibvirtPool::Impl::running_guests(std::size_t i) {
  HostState& h = connect(i);
  std::vector<std::string> out;
  for (const auto& g : guests)
    if (g->host == i)
      if (Domain d{virDomainLookupByName(h.conn.get(), g->domain.c_str())})
        if (virDomainIsActive(d.get()) == 1) out.push_back(g->name);
  return out;
}

std::string LibvirtPool::Impl::ask_host(std::size_t i, HostCapacity& c) {
  HostState& h = connect(i);
  virNodeInfo ni{};
  if (virNodeGetInfo(h.conn.get(), &ni) != 0) throw PoolError("libvirt " + h.cfg.uri.text + ": virNodeGetInfo: " + last_error());
  const std::int64_t kib = available_kib(h.conn.get(), h.cfg.uri.text);
  c.cores = static_cast<int>(ni.cpus);
  // Free memory already excludes what running domains take: this campaign's running guests
  // (adopted by acquire) go to `running`, every other running domain there to `others`.
  std::set<std::string> ours;
  for (const auto& g : guests) ours.insert(g->domain);
  c.running = running_guests(i);
  c.others = other_domains(h.conn.get(), h.cfg.uri.text, ours);
  c.memory_mib = kib / 1024;
  std::string name;
  if (char* hn = virConnectGetHostname(h.conn.get())) {
    name = hn;
    std::free(hn);
  }
  return name;
}

std::vector<HostCapacity> LibvirtPool::capacity() {
  Impl& m = *impl_;
  std::vector<HostCapacity> out;
  std::vector<std::string> machine;  // per entry of `out`: the hypervisor's hostname ("" = unknown or unreachable)
  for (std::size_t i = 0; i < m.hosts.size(); ++i) {
    HostCapacity c;
    c.host = m.identity(i);
    for (const auto& g : m.guests)
      if (g->host == i) c.guests.push_back(g->name);
    // One identity is one host without asking it (harness/pool/README.md "Host identity").
    if (const auto same = std::find_if(out.begin(), out.end(), [&](const HostCapacity& o) { return o.host == c.host; });
        same != out.end()) {
      same->guests.insert(same->guests.end(), c.guests.begin(), c.guests.end());
      if (!same->unreachable.empty()) continue;
      try {  // which of this entry's guests already run (the same daemon answered a moment ago)
        const auto r = m.running_guests(i);
        same->running.insert(same->running.end(), r.begin(), r.end());
      } catch (const std::exception&) {
        // not known: counted as to boot (judged stricter, never looser)
      }
      continue;
    }
    std::string name;
    try {
      name = m.ask_host(i, c);
    } catch (const std::exception& e) {  // not judged now; `harness run` asks again (pool.hpp)
      c.cores = 0;
      c.memory_mib = 0;
      c.running.clear();
      c.others.clear();
      c.unreachable = e.what();
      out.push_back(c);
      machine.push_back("");
      continue;
    }
    // Two identities whose daemons report the same hostname (qemu:///system and a qemu+ssh URI
    // to this machine) are one host for the rule: their guests share its cores and memory.
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
      if (const auto why = kvm_permission_cause(m.hooks.host_root))
        std::fprintf(m.out, "libvirt %s: warning: %s\n", h.cfg.uri.text.c_str(), why->c_str());
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
