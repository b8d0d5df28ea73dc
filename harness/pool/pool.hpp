#pragma once
// The guest-pool boundary (in the style of syzkaller's vm.Pool / vm.Instance): the only
// thing the campaign runner knows about where its guests come from. One engine per folder
// under harness/pool/ (local_qemu/, hosts/, libvirt/), each registered by its
// `provider.kind` (engine.hpp) and parsing its own `provider:` block of the campaign YAML.
// harness/pool/README.md has the table of engines and how to add one.
//
// CONTRACT (engines may add, never remove):
// - An engine is chosen by the campaign's `provider.kind` (or `--hosts FILE`, which is the
//   `hosts` engine with that file: engine.hpp open_pool).
// - parse: the engine validates its own block; errors are campaign errors reading
//   "FILE:LINE:COL: field provider.KEY: message" (harness/yaml/strict_yaml.hpp).
// - capacity: every engine reports, per hypervisor host, online cores and available memory
//   (local: online CPUs and MemAvailable; libvirt: virNodeGetInfo + virNodeGetFreeMemory;
//   hosts: unknown, i.e. not judged). check_capacity (capacity.hpp) refuses a placement that
//   puts more guest vCPUs on a host than cores - 1 or more guest memory than it has, unless
//   the campaign says provider.overcommit: true. capacity() never boots anything, and a host
//   that does not answer is listed with HostCapacity::unreachable, never thrown for: `harness
//   plan` works offline (that host is not judged then) and `harness run` refuses to start
//   until every host answers (runner.hpp).
// - acquire: adopt the campaign's guests an earlier (killed) runner of the same campaign
//   and DB left, boot the missing ones; a guest owned by anything else is refused, naming
//   its owner. Returns one Instance per campaign VM name, in the campaign's order.
// - Instance (one guest, the engine's own subclass): its address (Guest: where its agent
//   answers and how to trust it) and its own operations:
//   - fresh_boot: a fresh guest (new kernel boot, fresh data disk) for one case, with the
//     case's variant image and cmdline, when fresh_boot_per_case() (engine and campaign
//     agree); throws BootError (typed; the runner records an infra failure before the case
//     with the console tail in the attempt, never a lost case).
//   - liveness / diagnose: what the runner needs to decide, from evidence, whether a case
//     whose agent stopped answering is lost (docs/PROTOCOL.md): is the guest still running
//     (Unknown when the engine cannot tell), and the tail of its console ("" when it has none).
//   - release: stop and undefine this guest when the pool booted or adopted it.
//   An Instance is valid while its Pool lives.
// - release: what acquire booted or adopted and no Instance released yet. release_orphans:
//   when nothing is left to run, stop what an earlier (killed) runner of the same campaign
//   and DB left running.
// Threads: the runner has one worker thread per guest; fresh_boot, liveness and diagnose of
// different Instances may run at the same time. The other calls come from one thread.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <utility>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace harness::pool {

/// What an engine can do, as far as anything decides on it before a guest exists (the
/// registry's static entry, engine.hpp). What a guest can do is its Instance's.
struct Capabilities {
  bool fresh_boot_per_case = false;  ///< its guests can get a fresh boot per case (local-qemu, libvirt): `harness plan`'s wall time
  bool boot_variants = false;        ///< fresh_boot() honours BootRequest::image_dir and cmdline (the campaign loader refuses variants otherwise)
  /// Its guests run on the machine that runs `harness` (local-qemu): `harness plan` and
  /// `harness init` say so for a campaign whose timings are evidence, and point to `--hosts`.
  bool guests_on_this_machine = false;
  /// Its guests' kernel is known before any boots: they boot this machine's built image
  /// (<cache>/image, its manifest.json naming the release) unless a variant names another
  /// (local-qemu). `harness plan` then compares it with a pilot's (plan/pilot_match.hpp);
  /// other engines' kernels are known at `harness run`, from each guest's qualification.
  bool kernel_known_before_boot = false;
};

/// One hypervisor host's capacity, as the engine read it (not configured).
struct HostCapacity {
  std::string host;                 ///< Guest::host of its guests: "local:HOSTNAME", a libvirt URI's identity
                                    ///< (host_identity.hpp), a hosts-file hypervisor
  int cores = 0;                    ///< online CPUs; 0 = unknown (not judged)
  std::int64_t memory_mib = 0;      ///< memory available for guests now, MiB; 0 = unknown (not judged)
  std::vector<std::string> guests;  ///< campaign guests placed on this host
  /// Of `guests`, those already running (adopted after a killed runner): their memory is
  /// already taken from memory_mib, so only the others count against it.
  std::vector<std::string> running;
  /// Other guests running there (another campaign's, booted by hand): they count against
  /// the cores, not against memory_mib (already taken).
  std::vector<std::string> others;
  /// Other Guest::host names that reach this same machine (harness/pool/README.md "Host
  /// identity"); their guests are in `guests`.
  std::vector<std::string> aliases;
  /// Why the engine could not ask this host ("" = it answered): cores and memory are then 0
  /// (not judged now; `harness run` asks again and refuses to start while it stays so).
  std::string unreachable;
  /// > 0: `unreachable` because the host did not answer within this deadline, seconds (the
  /// engine's; libvirt: provider.connect_timeout_s); the capacity table says "no answer in N s".
  int no_answer_s = 0;
};

/// A guest's address: where its agent answers and how the runner trusts and treats it (an
/// Instance holds one; what a client of its agent is built from: agent_wait.hpp).
struct Guest {
  std::string name;          ///< campaign VM name (vm0..vmN)
  std::string host;          ///< hypervisor host it runs on, as its identity (host_identity.hpp: "local:HOSTNAME",
                             ///< a libvirt URI without credentials or options, a hosts-file `hypervisor:`);
                             ///< "" = unknown. Recorded per case (cases.host_uri).
  std::string url;           ///< agent base URL
  std::string token_file;    ///< bearer token file (0600)
  std::string accelerator;   ///< kvm | tcg | real ("" = detected in the guest); cases.accelerator
  std::string tls_ca_file;   ///< https: CA bundle that signed the agent certificate
  std::string tls_pin_sha256;  ///< https: agent public-key pin ("sha256//BASE64")
  bool insecure_plain_http = false;  ///< allow http:// to a non-loopback agent
  /// POST /v1/reboot through the agent before each case (only the hosts engine sets it, from
  /// the hosts file's reboot_between_cases).
  bool reboot_between_cases = false;
  int reboot_timeout_s = 600;         ///< wait for a new boot id after that reboot, s
};

/// One case's boot (A/B variants: harness/case/SPEC.md "variant").
struct BootRequest {
  std::string image_dir;              ///< image from `harness vm image --out DIR`; "" = the default image
  std::vector<std::string> cmdline;   ///< extra kernel parameters
  std::string log_dir;                ///< where the engine may keep this boot's console log (the attempt's; created by the engine)
};

struct BootResult {
  double boot_to_ready_s = -1;        ///< engine start -> agent health 200, seconds (-1 unknown)
  std::string accelerator;            ///< what this boot runs under (kvm | tcg)
  std::string accelerator_reason;     ///< why (auto probe result); "" when not known
  std::string console_log;            ///< path of this boot's console log ("" = none)
  std::string note;                   ///< something the runner should show (e.g. ownership not recorded); "" = none
};

/// The guest did not come up (qemu/libvirt refused, no agent in time). Not a lost case: the
/// runner records an infra failure before the case, with console_tail() in the attempt.
class BootError : public std::runtime_error {
 public:
  BootError(const std::string& guest, const std::string& what, std::string console_tail = {})
      : std::runtime_error(guest + ": " + what), guest_(guest), console_tail_(std::move(console_tail)) {}
  const std::string& guest() const { return guest_; }
  const std::string& console_tail() const { return console_tail_; }

 private:
  std::string guest_, console_tail_;
};

/// The campaign's placement does not fit its hosts (names host, guests, cores, memory).
class CapacityError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Any other engine failure (adoption refused, daemon unreachable, hosts file missing ...).
class PoolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Liveness { Running, Gone, Unknown };

/// "running" | "gone" | "unknown".
const char* to_string(Liveness l);

/// One guest of the campaign, as an engine gives it (engine-specific subclass). Valid while
/// the Pool that acquired it lives.
class Instance {
 public:
  virtual ~Instance() = default;
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;
  /// Its address (name, host, agent URL, token, TLS, accelerator, reboot settings).
  const Guest& guest() const { return guest_; }
  const std::string& name() const { return guest_.name; }
  /// The runner calls fresh_boot() before every case of this guest: the engine can boot it
  /// and the campaign's provider.fresh_guest_per_case asks for it.
  bool fresh_boot_per_case() const { return fresh_boot_per_case_; }
  /// A fresh boot for one case (fresh_boot_per_case()). Throws BootError.
  virtual BootResult fresh_boot(const BootRequest& r) = 0;
  /// Is the guest still running? Unknown when the engine cannot tell. Never throws.
  virtual Liveness liveness() = 0;
  /// Last `max_bytes` of its console ("" when the engine has none). Never throws.
  virtual std::string diagnose(std::size_t max_bytes = 4096) = 0;
  /// Stop (and undefine) this guest when its pool booted or adopted it; nothing otherwise.
  /// Its pool's release() then leaves it alone. Never throws.
  virtual void release() noexcept = 0;

 protected:
  Instance(Guest g, bool fresh_boot_per_case) : guest_(std::move(g)), fresh_boot_per_case_(fresh_boot_per_case) {}

 private:
  Guest guest_;
  bool fresh_boot_per_case_ = false;
};

/// The addresses of `instances`, in order (what agent_wait.hpp and the preflight take).
std::vector<Guest> addresses(const std::vector<std::unique_ptr<Instance>>& instances);

/// What acquire() and release_orphans() need from the runner.
struct AcquireContext {
  std::string campaign;     ///< campaign name (ownership)
  std::string db_path;      ///< campaign DB (ownership: made absolute and normal by the engine)
  std::string accelerator;  ///< --accel request ("" = $HARNESS_ACCEL, else the campaign's)
  std::string self_exe = "/proc/self/exe";  ///< the `harness` binary, for engines that run it
  std::FILE* out = stderr;  ///< adoption and boot notes
  int adopt_wait_s = 60;    ///< an adopted guest whose agent does not answer in this long is booted again, s
};

/// What `harness plan` and `harness run` learn of the campaign's guests before anything boots.
struct GuestsPreview {
  bool reboot_between_cases = false;    ///< a guest is rebooted through its agent before each case
  std::vector<std::string> not_booted;  ///< VMs this pool does not boot (no fresh boot per case), in order
};

class Pool {
 public:
  virtual ~Pool() = default;
  virtual std::string kind() const = 0;
  /// The campaign's VMs `vms` (design.vms, in its order) before anything boots. An engine
  /// that boots its guests has nothing to say (this default); the hosts engine reads a
  /// `--hosts FILE` (hosts_file.hpp preview_hosts). Throws PoolError when that file lacks one.
  virtual GuestsPreview preview_guests(const std::vector<std::string>& vms) const {
    (void)vms;
    return {};
  }
  /// Per host: cores, memory and the guests placed there (reads the hosts; no boot). A host
  /// that cannot be asked is listed with HostCapacity::unreachable (its guests still listed).
  /// Throws PoolError only when the engine's own configuration is unusable.
  virtual std::vector<HostCapacity> capacity() = 0;
  /// Adopt or boot the campaign's guests; one Instance per VM name, in order. Throws
  /// PoolError, BootError.
  virtual std::vector<std::unique_ptr<Instance>> acquire(const AcquireContext& ctx) = 0;
  /// Stop (and undefine) every guest this pool booted or adopted that no Instance released.
  /// Never throws.
  virtual void release() noexcept = 0;
  /// Nothing is left to run: stop the guests an earlier runner of ctx.campaign and
  /// ctx.db_path left running (it was killed after its last import). Never throws.
  virtual void release_orphans(const AcquireContext& ctx) noexcept = 0;
  /// One line for the run's start: engine, hosts, accelerator (after acquire: as booted).
  virtual std::string describe() const = 0;
};

}  // namespace harness::pool
