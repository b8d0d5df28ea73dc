#pragma once
// The libvirt engine of the guest-pool boundary (harness/pool/pool.hpp; provider.kind:
// libvirt): one transient domain per campaign guest on the hypervisor hosts of the
// provider block (config.hpp), driven through the libvirt C API only. README.md in this
// folder says how a lab is set up and how the runner reaches the agents.
//
// - Guests vm0..vmN are placed across the hosts in order; domain name = name_prefix + guest.
// - The image (`harness vm image`: vmlinuz, initramfs.cpio.gz, disk-base.img) is put on each
//   hypervisor through the storage API, content-addressed by the image hash (storage.hpp);
//   every boot gets a fresh copy of the data disk made there, with the guest's agent token
//   written into a slot of the disk (the base disk carries /token at a known offset).
// - Domain XML: domain_xml.hpp (the campaign's vCPUs and memory, no balloon, panic device,
//   on_crash destroy, serial console to a file in the storage pool). The domain type is
//   kvm or qemu per host (host_accel.hpp); the choice and its reason are in every Guest and
//   BootResult.
// - Agent: qemu forwards the guest's 8080 to a port on the hypervisor's loopback; the guest's
//   URL is that port here (qemu:///system, qemu+tcp://127.0.0.1/...) or the local end of an
//   ssh tunnel (qemu+ssh URIs; tunnel.hpp). No address of a private range is involved.
// - Ownership: every domain carries an owner record in its <metadata> (campaign, DB, runner
//   host and pid, forward port, token hash, image). acquire() adopts a running domain whose
//   record names this campaign, DB and runner host when its token is the one on file and its
//   agent answers; it destroys and boots again one of its own that does not, and destroys
//   its own domains of guests the campaign no longer has. A domain of another campaign or DB
//   (or one without a record) is refused, naming its owner.
// - The destructor stops tunnels and leaves domains running (as a runner killed with
//   kill -9 would): the next acquire() of the same campaign adopts them. release() is the
//   cleanup; libvirt_down() the `vm down` of this engine.
//
// Instances (what acquire() returns; pool.hpp Instance), one per guest:
// - fresh_boot: the first call for a guest that acquire() booted (not adopted), when the
//   request is that boot's (the default image, no extra cmdline) and the domain still runs:
//   no second boot; the boot of acquire serves the case (its console and domain XML are
//   copied to r.log_dir; the result is that boot's, with a note saying so). Otherwise:
//   destroys the guest's domain (its console goes to the previous boot's log_dir first),
//   boots a new one with a fresh data disk, the same token and forward port, r.image_dir's
//   image (uploaded when new) and r.cmdline, and waits for its agent. The console of this
//   boot is copied to r.log_dir/console.log (at ready, at diagnose() and when the domain is
//   destroyed) and the domain XML libvirt runs to r.log_dir/domain.xml. BootResult::note
//   says when the domain start took most of boot-to-ready and why (slow_start.hpp). Throws
//   BootError. fresh_boot_per_case() is provider.fresh_guest_per_case.
// - liveness: from virDomainGetState: running, blocked, paused -> Running; shut off,
//   crashed, no domain -> Gone; the hypervisor not answering -> Unknown.
// - diagnose: the console's last `max_bytes` (downloaded from the storage pool; also
//   refreshes the local copy); "console unavailable: ..." when it cannot be read.
// - release: destroys its domain and deletes its disk and console volumes (console copied
//   first), stops its tunnel.
#include "harness/pool/libvirt/config.hpp"
#include "harness/pool/libvirt/host_accel.hpp"
#include "harness/pool/libvirt/slow_start.hpp"
#include "harness/pool/libvirt/storage.hpp"
#include "harness/pool/pool.hpp"

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace harness::pool::libvirt {

/// The campaign's guest shape (its vm: block; study: 1 vCPU, 1 GiB).
struct GuestShape {
  int vcpus = 1;
  int memory_mib = 1024;
  int swapfile_mib = 256;  ///< swapfile the guest creates (harness.swapfile_mib), MiB
};

/// Replaceable parts, for unit tests against libvirt's test driver (which runs no guest and
/// moves no bytes). Empty members mean the real thing.
struct PoolHooks {
  std::shared_ptr<VolumeIo> io;                 ///< volume transfers (stream_volume_io())
  std::function<bool(const Guest&)> health;     ///< agent answers GET /v1/health with 200
  std::string default_image_dir;                ///< image of boots without BootRequest::image_dir
                                                ///< ("" = <cache>/image, harness::vm::load_image)
  int adopt_health_timeout_s = 15;              ///< wait for an adopted guest's agent, seconds
  /// A host's accelerator decision (choose_host_accelerator): called once per host with the
  /// trial boot's inputs and the resolved request (auto | kvm | tcg). The test driver offers
  /// no domain capabilities, so only a replacement reaches the kvm domain type without KVM
  /// (tests/README.md "KVM branches without KVM").
  std::function<HostAccel(const TrialBoot&, const std::string& request)> host_accelerator;
  /// This machine's root and libvirtd log, read for a hypervisor that is this machine when a
  /// domain start is slow (slow_start.hpp): /dev/kvm against libvirt's qemu user.
  std::string host_root = "/";
  std::string libvirtd_log = kLibvirtdLog;
};

class LibvirtPool : public Pool {
 public:
  /// No connection is made here (capacity() and acquire() connect). Throws std::invalid_argument
  /// when `cfg` has no hosts or `shape` is not a valid VM shape.
  LibvirtPool(LibvirtConfig cfg, GuestShape shape, PoolHooks hooks = {});
  /// Stops this pool's ssh tunnels; leaves its domains running (see the header comment).
  ~LibvirtPool() override;

  std::string kind() const override { return "libvirt"; }
  /// Per host entry: virNodeGetInfo's active CPUs; memory = virNodeGetFreeMemory plus the
  /// host's buffers and page cache (virNodeGetMemoryStats, when the driver reports them: the
  /// MemAvailable that local guests use); `running` = this pool's guests whose domains are
  /// active there (acquire() adopts or replaces them: their memory is already taken), `others`
  /// = every other active domain there (sorted). Throws PoolError.
  std::vector<HostCapacity> capacity() override;
  /// Adopts or boots every guest (see the header comment), in parallel; prints one line per
  /// host's accelerator, per adopted, replaced or destroyed domain and per ready guest to
  /// ctx.out, and a warning when a hypervisor that is this machine has a /dev/kvm that
  /// libvirt's qemu user cannot open (slow_start.hpp), and a note for each guest whose domain
  /// start took most of its boot-to-ready. Each host's storage pool gets this campaign's
  /// claim on the image (image_staging.hpp). Throws PoolError (unreachable host, foreign domain, kvm requested but
  /// unavailable) or BootError (a guest did not come up).
  std::vector<std::unique_ptr<Instance>> acquire(const AcquireContext& ctx) override;
  /// Destroys every domain this pool booted or adopted that no Instance released, deletes
  /// their disk and console volumes (consoles copied first) and stops the tunnels. Images
  /// stay. Never throws.
  void release() noexcept override;
  /// libvirt_down of ctx.campaign and ctx.db_path on every host (domains an earlier runner
  /// of the same campaign and DB left running, with their disk and console volumes). Never throws.
  void release_orphans(const AcquireContext& ctx) noexcept override;
  /// "engine libvirt: N guest(s) (vm0 ..) on URI (vm0, vm1), URI (vm2); accelerator ..."
  /// (per host, as chosen once acquire() ran; before it: the request).
  std::string describe() const override;

  /// The XML libvirt runs for guest `name` now. Throws PoolError when it has no domain.
  std::string live_domain_xml(const std::string& name);
  /// The last boot of guest `name` by this pool (acquire or fresh_boot); nullopt when adopted.
  std::optional<BootResult> last_boot(const std::string& name) const;
  /// Volumes uploaded by this pool (names, in order): what content addressing saved.
  std::vector<std::string> uploads() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// `harness vm down` for libvirt: on every host of `cfg`, destroys the domains named
/// name_prefix + ... that carry a harness owner record (only those of `campaign` and `db`
/// when given: db is compared absolute and normal) and deletes their disk and console
/// volumes; with `images`, also the campaign's claims on image volumes and every image no
/// other campaign or DB claims (release_images, image_staging.hpp). Domains without an
/// owner record are never touched. Prints one line per domain to `out`; returns
/// "DOMAIN on URI" per destroyed domain (hosts in order, domains by name). Throws PoolError when a host cannot be reached.
std::vector<std::string> libvirt_down(const LibvirtConfig& cfg, const std::string& campaign = "",
                                      const std::string& db = "", bool images = false, std::FILE* out = stderr);

/// `harness vm down --campaign FILE --purge` for libvirt: removes the storage pool
/// cfg.storage_pool (every volume in it, of every campaign; its directory; its definition)
/// from every host of `cfg`, then the runner's slotted base disks <cache_root>/libvirt/images.
/// Refuses (PoolError listing them, before removing anything) while any domain with a harness
/// owner record runs on one of those hosts. Prints one line per host to `out`. Throws
/// PoolError when a host cannot be reached or a step fails (naming host and step).
void libvirt_purge(const LibvirtConfig& cfg, const std::string& cache_root, std::FILE* out = stderr);

}  // namespace harness::pool::libvirt
