#pragma once
// Choosing the qemu accelerator by trial, not by presence.
//
// A /dev/kvm that opens read-write can still be unable to run a guest (nested
// virtualization that fails: qemu aborts with "failed to set MSR 0x10a", or starts and the
// guest never prints a byte). So `auto` boots a probe guest under KVM (the guest kernel,
// no initramfs, serial console to a file) and takes KVM only when the kernel's banner
// ("Linux version") reaches the serial console within the probe timeout; otherwise it
// falls back to TCG and says why. An explicit `kvm` that fails the same probe is an
// error, never a silent fallback. `tcg` never probes.
//
// Before any probe, check_kvm_host() reads what the host itself says: a /dev/kvm that is
// nested PVM (/sys/module/kvm_pvm exists: PVM runs only CONFIG_PVM_GUEST kernels that a VMM
// boots directly in 64-bit mode, so qemu's firmware path stays silent for the whole probe
// timeout), or a CPU whose /proc/cpuinfo `flags` carry neither vmx nor svm. Then `auto` takes
// TCG at once ("auto: <reason>; using TCG", no probe) and `kvm` is an AccelError at once. A
// cpuinfo that cannot be read says nothing: the probe decides.
//
// Precedence of the request: the command's --accel flag, then the environment variable
// HARNESS_ACCEL, then the campaign's provider.accelerator, then `auto`.
// The probe result is cached twice, keyed by ProbeKey (below: the one key rule of every
// cached KVM verdict, local guests' and libvirt hosts' alike); for local guests the host's
// boot id (/proc/sys/kernel/random/boot_id), the qemu version line, the KVM device path and
// the SHA-256 of the guest kernel's bytes: in <cache>/accel-probe.json, and machine-wide in
// <machine dir>/accel-probe-<key digest>.json (machine_probe_dir()), so every cache root
// and image directory on one host boot shares one probe. On hosts where KVM opens but the
// guest stays silent, a probe costs its whole timeout (30 s); before the machine-wide
// cache each guest test with its own cache root paid it again.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "harness/error/expected.hpp"

namespace harness::vm {

/// What a cached KVM verdict is valid for: the one key rule of local guests
/// (choose_accelerator) and of libvirt hosts (harness/pool/libvirt/libvirt_pool.cpp). A
/// verdict is reused only while every part is the same; a part that changes (another host,
/// a reboot, another libvirt or qemu, another device or guest kernel) means a new trial.
struct ProbeKey {
  std::string host;        ///< host identity (harness/pool/host_identity.hpp); "" for local guests (the boot id names the host)
  std::string boot;        ///< the host's boot id; "" when not known (a remote hypervisor)
  std::string hypervisor;  ///< libvirt's version on that host ("" for local guests)
  std::string qemu;        ///< the qemu binary and its version
  std::string kvm_device;  ///< "/dev/kvm" (local guests; a test's fake device)
  std::string kernel_sha256;  ///< the trial's guest kernel, by content
  /// "host|boot|hypervisor|qemu|kvm_device|kernel_sha256".
  std::string text() const;
  /// The cache file name of this key: "accel-probe-<first 16 hex of SHA-256(text())>.json".
  std::string file_name() const;
};

/// A cached KVM verdict.
struct ProbeVerdict {
  bool kvm_ok = false;
  std::string detail;           ///< what the trial saw ("... printed the kernel banner after 3.1 s")
  double trial_s = -1;          ///< wall time of the trial, seconds (-1 = not recorded)
  std::int64_t measured_unix = 0;  ///< when the trial ran (0 = not recorded)
};

/// The verdict cached for `key` in `file`; nullopt when absent, unreadable or of another key.
std::optional<ProbeVerdict> read_probe_verdict(const std::string& file, const ProbeKey& key);

/// Writes `v` for `key` to `file` atomically (temp file + rename; the directory is created).
/// A file that cannot be written only costs a trial next time: never throws.
void write_probe_verdict(const std::string& file, const ProbeKey& key, const ProbeVerdict& v);

/// What the caller asks for and what the probe needs.
struct AccelRequest {
  std::string requested;              ///< auto | kvm | tcg; "" = $HARNESS_ACCEL, else auto
  std::string vmlinuz;                ///< guest kernel booted by the probe (required for a probe)
  std::string cache_dir;              ///< where accel-probe.json lives; "" = no per-cache-root file
  /// Machine-wide probe cache directory; "" = machine_probe_dir(), "-" = none.
  std::string machine_cache_dir;
  std::string kvm_device = "/dev/kvm";
  std::string qemu = "qemu-system-x86_64";  ///< looked up in PATH
  int timeout_s = 30;                 ///< banner must appear within this, seconds
  /// Root that check_kvm_host() reads sys/module/kvm_pvm and proc/cpuinfo under
  /// (a fixture tree in tests).
  std::string host_root = "/";
};

/// The decision and its reason (printed to stderr by every command that boots guests).
struct AccelChoice {
  std::string accelerator;  ///< kvm | tcg
  std::string reason;       ///< e.g. "auto: KVM probe failed (qemu exited with status 134: ...)"
  bool from_cache = false;  ///< the probe result came from a cache file (per root or machine-wide)
  double trial_s = -1;      ///< wall time of the KVM trial boot this call ran, seconds (-1 = none ran)
  /// One line: "accelerator: tcg (auto: ...)" plus the TCG timing warning when tcg.
  std::string message() const;
};

/// Thrown when `kvm` was requested explicitly and the probe failed, or the request is not
/// one of auto|kvm|tcg (the message names the source: --accel, HARNESS_ACCEL, ...).
class AccelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A request value as given; "" stays "" (meaning: use the next source). Throws AccelError
/// naming `source` for anything but auto|kvm|tcg.
std::string accel_request(const std::string& value, const std::string& source);

/// The effective request: `flag` when set, else $HARNESS_ACCEL when set, else `campaign`
/// when set, else "auto". Each goes through accel_request (AccelError naming its source).
std::string effective_accel_request(const std::string& flag, const std::string& campaign = "");

/// The machine-wide probe cache directory: $HARNESS_ACCEL_PROBE_DIR when set, else
/// /run/reclaim-harness when it exists or can be created and written, else
/// /tmp/reclaim-harness-<uid>. Created on use; a directory that cannot be written only
/// costs a probe (never a failure).
std::string machine_probe_dir();

/// Whether KVM on this host may run a stock guest kernel, as known without booting anything:
/// passed when the host says nothing against it (the trial boot decides), else the Problem.
/// Reads under `root` ("/" normally):
///  - sys/module/kvm_pvm exists -> "/dev/kvm is nested PVM: a stock guest kernel cannot run
///    under it (...)";
///  - proc/cpuinfo has `flags` lines and none carries vmx or svm -> "/dev/kvm is present but
///    the CPU has no vmx or svm flag: ...".
/// A cpuinfo that cannot be read, or has no `flags` line, is not taken as "no flags".
/// Also used by the libvirt engine for a hypervisor on this machine (host_accel.hpp).
Checked check_kvm_host(const std::string& root = "/");

/// Decides the accelerator as described at the top of this header. Throws AccelError
/// (explicit kvm failed; bad request) or std::runtime_error (probe could not be started
/// for another reason, e.g. vmlinuz missing for an auto/kvm probe).
AccelChoice choose_accelerator(const AccelRequest& req);

}  // namespace harness::vm
