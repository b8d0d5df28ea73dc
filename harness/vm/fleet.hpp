#pragma once
// Long-running local guests for campaigns: `harness vm up/down/list/reboot/console`
// (docs/DESIGN.md "Local VMs"). Each guest runs `harness agent` (see init_script.hpp);
// state lives under <cache>/vms/<name>/: pid (qemu pidfile), meta.json, token (0600),
// console.log, disk.img.
#include <string>
#include <vector>

namespace harness::vm {

/// Shape and placement of the guests started by up().
struct FleetOptions {
  std::string cache_dir;     ///< cache root override
  int count = 1;             ///< guests vm0..vm<count-1>
  int first_index = 0;       ///< name index of the first guest
  int vcpus = 1;             ///< study: 1 vCPU
  int memory_mib = 1024;     ///< study: 1 GiB
  int swapfile_mib = 256;    ///< swapfile created in each guest, MiB
  bool fresh_per_case = true;  ///< recorded in meta.json and the hosts file comment: the
                               ///< runner reboots a guest (fresh data disk) before each case
  std::string hosts_file;    ///< written after boot; default <cache>/hosts.yaml
  int ready_timeout_s = 300; ///< wait for GET /v1/health = 200, seconds
  std::string accelerator;   ///< auto | kvm | tcg; "" = $HARNESS_ACCEL, else auto (accel.hpp)
  bool guest_reboot = false; ///< QemuConfig::guest_reboot (recorded in meta.json)
};

/// One guest as seen by list().
struct GuestInfo {
  std::string name;
  std::string url;           ///< http://127.0.0.1:<port>
  std::string token_file;
  std::string accelerator;   ///< kvm | tcg
  int pid = -1;              ///< qemu pid, -1 when not running
  bool running = false;
  double boot_to_ready_s = -1;  ///< last boot: qemu start -> health 200, seconds (-1 unknown)
  std::string state_dir;
  /// The campaign VM it serves, when a campaign runs it (harness/pool/local_guest/slots.hpp; ""
  /// = none said): write_hosts_file lists it under that name, with `local_guest:` its own.
  std::string serves;
};

/// Boots the guests (in parallel), waits until each agent answers /v1/health, writes
/// the hosts file (harness/vm/HOSTS.md format) and returns their info. Prints per-guest
/// boot-to-ready time and a TCG warning to stderr. Throws std::runtime_error when a guest
/// with that name is already running, qemu fails to start, or a guest is not ready in time
/// (the message points at `harness vm console NAME`).
std::vector<GuestInfo> fleet_up(const FleetOptions& opts);

/// Stops guests (all when `names` is empty): SIGTERM to qemu, SIGKILL after 10 s; removes
/// their disks. Returns the names stopped.
std::vector<std::string> fleet_down(const std::string& cache_dir, const std::vector<std::string>& names);

/// Every guest with a state dir, running or not.
std::vector<GuestInfo> fleet_list(const std::string& cache_dir);

/// What one boot of a guest uses besides the default image (A/B variants).
struct BootOptions {
  std::string image_dir;              ///< image built by `vm image --out DIR`; "" = <cache>/image
  std::vector<std::string> cmdline;   ///< extra kernel parameters (QemuConfig::extra_cmdline)
};

/// Fresh guest `name`: stop it, new copy of the base data disk (no swap residue), same port
/// and token, boot (with `boot`'s image and extra kernel parameters; recorded in meta.json
/// "boot"), wait for /v1/health. Returns its info (boot_to_ready_s of this boot). Throws
/// std::runtime_error for an unknown guest, an image dir without manifest.json, a bad
/// kernel parameter, or a guest not ready in time.
GuestInfo fleet_reboot(const std::string& cache_dir, const std::string& name, int ready_timeout_s = 300,
                       const BootOptions& boot = {});

/// Path of a guest's console log. Throws std::runtime_error for an unknown guest.
std::string console_log_path(const std::string& cache_dir, const std::string& name);

/// Writes a hosts file (HOSTS.md format) for `guests`: each under GuestInfo::serves when set
/// (with `local_guest: NAME` when that differs from its name), else under its name. Throws
/// std::runtime_error naming the file.
void write_hosts_file(const std::string& path, const std::vector<GuestInfo>& guests, bool fresh_per_case);

}  // namespace harness::vm
