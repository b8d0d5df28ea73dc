#pragma once
// Reader of the hosts file (format: harness/vm/HOSTS.md): agents on VMs someone else
// created, one entry per VM. Read through the strict YAML reader (harness/yaml/strict_yaml.hpp):
// unknown keys (with did-you-mean), duplicate keys and leading zeros are refused, and every
// error reads "FILE:LINE:COL: field hosts[i].KEY: message".
#include "harness/pool/pool.hpp"

#include <string>
#include <vector>

namespace harness::pool::hosts {

/// One VM agent. `name` is the stratum name used by the campaign (vm0..vmN).
struct HostEntry {
  std::string name;
  std::string url;          ///< agent base URL, e.g. http://127.0.0.1:40123
  std::string token_file;   ///< bearer token file (mode 0600)
  std::string accelerator;  ///< kvm | tcg | real; "" = detected in the guest
  bool local = false;       ///< booted by `harness vm up`; `harness vm reboot NAME` works
  /// With `local: true`: the local guest (`harness vm list` name, state dir <cache>/vms/NAME)
  /// that serves this VM when it is not `name` (a campaign's guests take free slots:
  /// harness/pool/local_guest/slots.hpp); "" = `name`.
  std::string local_guest;
  std::string tls_ca_file;     ///< https: CA bundle (PEM) that signed the agent certificate
  std::string tls_pin_sha256;  ///< https: agent public-key pin ("sha256//BASE64", `harness fleet pin`)
  bool insecure_plain_http = false;  ///< allow http:// to a non-loopback agent (token in clear text)
  /// Reboot the VM through its agent (POST /v1/reboot; agent --allow-reboot) before every
  /// case, and wait for a new boot id (a reused VM starts each case fresh).
  bool reboot_between_cases = false;
  int reboot_timeout_s = 600;  ///< wait for the VM to answer with a new boot id, s (10..86400)
  /// The physical machine (hypervisor) the VM runs on, as the lab names it ("hv2",
  /// "qemu+ssh://hv2/system"): recorded per case as cases.host_uri and used to group the
  /// VMs per host in `harness plan`. "" = not known (local: true entries: this machine).
  std::string hypervisor;
};

/// Parses a hosts file. Throws harness::yaml::InputError ("FILE:LINE:COL: field hosts[i].x: ...").
std::vector<HostEntry> load_hosts(const std::string& path);

/// The agent-facing fields of `e` as a Guest (name, url, token file, accelerator, TLS,
/// plain-HTTP permission, reboot settings): what a client of its agent is built from
/// (pool::client_options). Guest::host and fresh_boot_per_case are left for the engine.
Guest guest_of(const HostEntry& e);

/// What `harness plan` / `harness run --hosts FILE` need from hosts file `path` before
/// anything boots, for VMs `vms` (of campaign file `campaign_file`, for the message):
/// not_booted lists the VMs without `local: true`.
/// A file that does not exist (yet) says nothing: `harness plan` may run before it does.
/// Throws PoolError naming the file, the VMs it lacks and those it lists; harness::yaml::
/// InputError for a malformed file.
GuestsPreview preview_hosts(const std::string& path, const std::vector<std::string>& vms,
                           const std::string& campaign_file);

}  // namespace harness::pool::hosts
