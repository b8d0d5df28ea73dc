#pragma once
// The guest-pool boundary (in the style of syzkaller's vm.Pool / vm.Instance): the only
// thing the campaign runner knows about where its guests come from. One engine per file or
// folder under harness/pool/ (local-qemu, hosts, libvirt), each registered by its
// `provider.kind` and parsing its own `provider:` block of the campaign YAML.
//
// CONTRACT (written before the engines; engines may add, never remove):
// - An engine is chosen by the campaign's `provider.kind` (or `--hosts FILE`, which is the
//   `hosts` engine with that file).
// - parse: the engine validates its own block; errors are campaign errors reading
//   "FILE:LINE:COL: field provider.KEY: message" (strict_yaml.hpp).
// - capacity: every engine reports, per hypervisor host, online cores and available memory
//   (local: online CPUs and MemAvailable; libvirt: virNodeGetInfo + virNodeGetFreeMemory;
//   hosts: unknown, i.e. not judged). check_capacity refuses a placement that puts more
//   guests on a host than cores - 1 or more guest memory than it has, unless the campaign
//   says provider.overcommit: true.
// - acquire: adopt the campaign's guests an earlier (killed) runner of the same campaign
//   and DB left, boot the missing ones; a guest owned by anything else is refused, naming
//   its owner. Returns one Guest per campaign VM name, in the campaign's order.
// - fresh_boot: a fresh guest (new kernel boot, fresh data disk) for one case, with the
//   case's variant image and cmdline; throws BootError (typed; the runner records an
//   infra failure before the case, never a lost case).
// - liveness / diagnose: what the runner needs to decide, from evidence, whether a case whose
//   agent stopped answering is lost (docs/PROTOCOL.md): is the guest still running, and the
//   tail of its console.
// - release: stop and undefine what this pool booted or adopted.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace harness::pool {

/// What an engine can do. The runner decides waits, reboots and evidence from these alone.
struct Capabilities {
  bool fresh_boot_per_case = false;  ///< fresh_boot() works (local-qemu, libvirt)
  bool boot_variants = false;        ///< fresh_boot() honours BootRequest::image_dir and cmdline
  bool agent_reboot = false;         ///< guests may be rebooted through their agent (hosts: reboot_between_cases)
  bool remote = false;               ///< guests may run on another machine (TLS pin off loopback)
  bool console = false;              ///< diagnose() returns a console tail
  bool liveness = false;             ///< liveness() can say Gone (not only Unknown)
};

/// One hypervisor host's capacity, as the engine read it (not configured).
struct HostCapacity {
  std::string host;                 ///< "local", a libvirt URI, or the hosts file's name
  int cores = 0;                    ///< online CPUs; 0 = unknown (hosts engine)
  std::int64_t memory_mib = 0;      ///< memory available for guests, MiB; 0 = unknown
  std::vector<std::string> guests;  ///< campaign guests placed on this host
};

/// A guest of the campaign, as the runner talks to it (its agent).
struct Guest {
  std::string name;          ///< campaign VM name (vm0..vmN)
  std::string host;          ///< hypervisor host it runs on: "local", a libvirt URI, "" (hosts engine)
  std::string url;           ///< agent base URL
  std::string token_file;    ///< bearer token file (0600)
  std::string accelerator;   ///< kvm | tcg | real ("" = detected in the guest)
  std::string tls_ca_file;
  std::string tls_pin_sha256;
  bool insecure_plain_http = false;
  bool reboot_between_cases = false;  ///< hosts engine: POST /v1/reboot before each case
  int reboot_timeout_s = 600;
};

/// One case's boot (A/B variants: harness/case/SPEC.md "variant").
struct BootRequest {
  std::string image_dir;              ///< image from `harness vm image --out DIR`; "" = the default image
  std::vector<std::string> cmdline;   ///< extra kernel parameters
  std::string log_dir;                ///< where the engine keeps this boot's console log (the attempt's)
};

struct BootResult {
  double boot_to_ready_s = -1;        ///< engine start -> agent health 200, seconds
  std::string accelerator;            ///< what this boot runs under (kvm | tcg)
  std::string accelerator_reason;     ///< why (auto probe result)
  std::string console_log;            ///< path of this boot's console log ("" = none)
};

/// The guest did not come up (qemu/libvirt refused, no agent in time). Not a lost case.
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

/// Any other engine failure (adoption refused, daemon unreachable ...).
class PoolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Liveness { Running, Gone, Unknown };

/// What acquire() needs from the runner.
struct AcquireContext {
  std::string campaign;     ///< campaign name (ownership)
  std::string db_path;      ///< campaign DB (ownership: absolute, normal)
  std::string accelerator;  ///< --accel / $HARNESS_ACCEL request ("" = the campaign's)
  std::string self_exe = "/proc/self/exe";
  std::FILE* out = stderr;  ///< adoption and boot notes
};

class Pool {
 public:
  virtual ~Pool() = default;
  virtual std::string kind() const = 0;
  virtual Capabilities capabilities() const = 0;
  /// Per host: cores, memory and the guests placed there (reads the hosts; no boot).
  virtual std::vector<HostCapacity> capacity() = 0;
  /// Adopt or boot the campaign's guests; one per VM name, in order. Throws PoolError, BootError.
  virtual std::vector<Guest> acquire(const AcquireContext& ctx) = 0;
  /// Fresh boot of one guest for a case (capabilities().fresh_boot_per_case). Throws BootError.
  virtual BootResult fresh_boot(const Guest& g, const BootRequest& r) = 0;
  virtual Liveness liveness(const Guest& g) = 0;
  /// Last `max_bytes` of the guest's console ("" when the engine has none).
  virtual std::string diagnose(const Guest& g, std::size_t max_bytes = 4096) = 0;
  /// Stop (and undefine) every guest this pool booted or adopted. Never throws.
  virtual void release() noexcept = 0;
};

}  // namespace harness::pool
