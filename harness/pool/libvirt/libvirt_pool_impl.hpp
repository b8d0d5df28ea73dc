#pragma once
// LibvirtPool's state and its operations (libvirt_pool.hpp), shared by the files that hold one
// idea each (README.md): the pool and its lifetime (libvirt_pool.cpp), each host's accelerator
// (accel_verdict.cpp), capacity (capacity.cpp), the image a boot gets (pool_images.cpp), ports and
// tunnels (guest_reach.cpp), ownership and adoption (adoption.cpp), a guest's boot (guest_boot.cpp),
// its console and liveness (guest_observe.cpp). Internal to this engine.
#include "harness/pool/host_identity.hpp"
#include "harness/pool/libvirt/deadline.hpp"
#include "harness/pool/libvirt/domain_xml.hpp"
#include "harness/pool/libvirt/image_staging.hpp"
#include "harness/pool/libvirt/libvirt_pool.hpp"
#include "harness/pool/libvirt/tunnel.hpp"
#include "harness/pool/libvirt/virt.hpp"
#include "harness/vm/accel.hpp"
#include "harness/vm/image.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace harness::pool::libvirt {

using Clock = std::chrono::steady_clock;

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

/// What a host answers for its capacity: online CPUs, memory available (KiB), its active
/// domains (sorted) and the hostname its daemon reports ("" when it does not say).
struct HostFacts {
  int cores = 0;
  std::int64_t kib = 0;
  std::vector<std::string> active;
  std::string hostname;
};

struct LibvirtPool::Impl {
  LibvirtConfig cfg;
  GuestShape shape;
  PoolHooks hooks;
  std::string cache;
  std::vector<std::unique_ptr<HostState>> hosts;
  std::vector<std::unique_ptr<GuestState>> guests;
  std::string campaign, db, runner_host;  // runner_host: this machine's hostname (gethostname)
  std::string accel_request;
  std::FILE* out = stderr;
  mutable std::mutex uploads_mu;
  std::vector<std::string> uploads;

  VolumeIo& io() { return *hooks.io; }

  // --- hosts and guests (libvirt_pool.cpp)

  /// Host entry i, connected (again when its connection died) with its storage pool ensured.
  /// Throws PoolError.
  HostState& connect(std::size_t i);

  /// The URI libvirt opens for host entry i: with the ssh deadline (deadline.hpp).
  std::string open_uri(std::size_t i) const { return deadline_uri(cfg, hosts[i]->cfg.uri); }

  /// A connection to host entry i within connect_timeout_s. Throws PoolError naming the URI.
  Conn open_bounded(std::size_t i);

  /// The guest named `name`. Throws BootError when the pool has none.
  GuestState& guest(const std::string& name);

  /// Host entry i's identity (harness/pool/host_identity.hpp): Guest::host, the capacity
  /// table's and the cost files' name of the host.
  std::string identity(std::size_t i) const { return host_identity(hosts[i]->cfg.uri.text); }

  /// g as the runner sees it (pool.hpp Guest): name, host identity, URL here, token file, accelerator.
  Guest public_guest(const GuestState& g) const;

  /// Destroys g's domain when there is one (and undefines it when someone made it persistent).
  /// Throws PoolError when it stays active.
  void destroy_domain(GuestState& g);

  /// Destroys g's domain when this pool booted or adopted it, deletes its disk and console
  /// volumes (console copied first) and stops its tunnel. Never throws.
  void release(GuestState& g) noexcept;

  // --- each host's accelerator (accel_verdict.cpp)

/// The key of h's cached KVM verdict (harness/vm/accel.hpp ProbeKey: the rule local guests
/// use): the host's identity; its libvirt version and what its kvm domain capabilities say
/// (a digest: they change when /dev/kvm appears or goes; a remote host's boot id is not
/// known); its qemu (version and emulator path); the image (content-addressed: its hash
/// covers the kernel).
  harness::vm::ProbeKey probe_key(HostState& h, const StagedImage& img);

  /// h's accelerator, decided once per run: a cached verdict of the same key, else
  /// hooks.host_accelerator (a trial boot) with the verdict and its time recorded; printed to
  /// `out`, with the TCG warning. Throws PoolError (kvm requested but unavailable).
  HostAccel accelerator(HostState& h, const StagedImage& img);

  // --- the image a boot gets (pool_images.cpp)

  /// The image of `dir`, else hooks.default_image_dir's, else the cache's (harness/vm/image.hpp).
  harness::vm::Image image(const std::string& dir);

  /// img staged on h once per run (image_staging.hpp), after this campaign's claim on it; an
  /// upload is timed (host_costs.hpp), listed in `uploads` and printed.
  StagedImage staged(HostState& h, const harness::vm::Image& img);

  // --- ports and tunnels (guest_reach.cpp)

  /// A forward port on h's loopback: a free one on this machine, else a random one in
  /// 20000-29999 (a taken one fails the domain start, which picks again).
  int pick_port(const HostState& h);

/// Makes g.local_port reach the hypervisor's g.forward_port (tunnel for ssh URIs).
  /// Throws PoolError when no tunnel could be opened.
  void reach(GuestState& g);

  // --- ownership and adoption (adoption.cpp)

  /// The owner record of g's domain (domain_xml.hpp): campaign, DB, runner host and pid,
  /// forward port, token and image hashes, accelerator, now.
  OwnerRecord owner(const GuestState& g) const;

/// Adopts g's running domain when it is this campaign's and answers. Throws PoolError for
/// a domain of anyone else. Returns false when there is nothing to adopt (destroyed or none).
  bool adopt(GuestState& g);

/// Destroys this campaign's domains of guests it no longer has, on every host.
  void destroy_extras();

  // --- a guest's boot (guest_boot.cpp)

/// Fresh disk, domain definition and start. Sets g.started. Throws BootError.
  void start(GuestState& g, const harness::vm::Image& img, const std::vector<std::string>& cmdline, bool may_change_port);

/// Waits for the agent after start(); returns boot-to-ready seconds. Throws BootError.
  double wait_ready(GuestState& g);

  /// The boot's result after `secs` of boot-to-ready: recorded (host_costs.hpp), with the
  /// slow-start note when the domain start dominated (slow_start.hpp), the evidence kept.
  BootResult finish_boot(GuestState& g, double secs);

  /// A new agent token for g in its token file (0600), its SHA-256 kept.
  void new_token(GuestState& g);

/// g's fresh boot for a case (libvirt_pool.hpp "Instances"). Throws BootError.
  BootResult fresh_boot(GuestState& g, const BootRequest& r);

  // --- a guest's console and liveness (guest_observe.cpp)

  std::string console_volume(const GuestState& g) const { return g.domain + "-console.log"; }
  std::string disk_volume(const GuestState& g) const { return g.domain + "-disk.img"; }

/// Downloads the console into g.log_dir/console.log. Returns its text ("" when none yet).
  /// Throws on a failed download (virt.hpp errors).
  std::string save_console(GuestState& g);

  /// The last `n` bytes of g's console, or "console unavailable: ..." when it cannot be read.
  std::string console_tail(GuestState& g, std::size_t n);

/// Copies the console and the domain XML libvirt runs into g.log_dir.
  /// A failure is printed to `out`, never thrown.
  void keep_evidence(GuestState& g);

/// From virDomainGetState (libvirt_pool.hpp "Instances").
  Liveness liveness(GuestState& g) noexcept;

/// The console's last `max_bytes` (libvirt_pool.hpp "Instances").
  std::string diagnose(GuestState& g, std::size_t max_bytes) noexcept;

  // --- capacity (capacity.cpp)

/// Host entry i's guests among `active` (domain names).
std::vector<std::string> running_among(std::size_t i, const std::vector<std::string>& active) const;

/// Fills c (the capacity row of host entry i) from what its host answered: cores, memory,
/// running guests and the other domains.
void fill(std::size_t i, const HostFacts& f, HostCapacity& c) const;

/// One capacity question per host identity, all at once, each answered or not within
/// connect_timeout_s (deadline.hpp); by identity.
std::map<std::string, BoundedResult<HostFacts>> ask_hosts();

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

}  // namespace harness::pool::libvirt
