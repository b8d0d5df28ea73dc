#pragma once
// The `provider:` block of a campaign whose guests are libvirt domains (provider.kind:
// libvirt), parsed and validated here, and the placement rule of its guests (ours):
// guests vm0..vmN are numbered across `hosts` in the order listed, e.g.
//   provider: {kind: libvirt, hosts: [{uri: "qemu:///system", guests: 3},
//                                     {uri: "qemu+ssh://user@hv2/system", guests: 6}]}
// puts vm0..vm2 on qemu:///system and vm3..vm8 on hv2. README.md in this folder documents
// every key.
#include "harness/pool/engine.hpp"
#include "harness/yaml/strict_yaml.hpp"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace harness::pool::libvirt {

/// The parts of a libvirt connection URI the engine needs
/// (driver[+transport]://[user@][host][:port]/path[?query]; https://libvirt.org/uri.html).
struct LibvirtUri {
  std::string text;       ///< as written
  std::string driver;     ///< "qemu" (or "test" for the unit tests' test:///default)
  std::string transport;  ///< "" (local), ssh, tcp, tls, unix, libssh, libssh2
  std::string user;
  std::string host;       ///< "" = this machine
  int port = 0;           ///< 0 = transport default
  std::string path;       ///< "/system"
  std::string keyfile;    ///< query keyfile= (ssh private key)
  std::string known_hosts;  ///< query known_hosts=
  bool no_verify = false;   ///< query no_verify=1 (ssh: do not check the host key)
  std::string command;      ///< query command= (ssh transport: the program run instead of ssh)
  /// The hypervisor is this machine: no host, "localhost" or a loopback address (then a
  /// free port can be checked here).
  bool same_machine() const;
  /// The agent is reached through an ssh tunnel (transport ssh; see README.md "How the
  /// runner reaches the agents").
  bool tunnel() const { return transport == "ssh" || transport == "libssh" || transport == "libssh2"; }
};

/// Parses `text`. Throws std::invalid_argument with a message naming what is wrong (no "://",
/// a port that is not a number, ...).
LibvirtUri parse_uri(const std::string& text);

/// One hypervisor host of the block.
struct LibvirtHost {
  LibvirtUri uri;
  int guests = 0;  ///< > 0
};

/// A validated provider block. Defaults are the values used when a key is absent.
struct LibvirtConfig {
  std::vector<LibvirtHost> hosts;      ///< in order; guests are numbered across them
  bool fresh_guest_per_case = true;    ///< destroy and recreate the domain before every case
  std::string accelerator = "auto";    ///< auto | kvm | tcg (harness/vm/accel.hpp precedence)
  std::string name_prefix = "harness-";  ///< domain name = prefix + guest name ([A-Za-z0-9_.-]{0,32})
  std::string storage_pool = "reclaim-harness";  ///< libvirt storage pool of the harness's volumes
  /// Directory of that pool on each hypervisor when the engine has to create it (a path the
  /// libvirt-qemu user can read: not under a home or hidden directory).
  std::string storage_path = "/var/lib/libvirt/reclaim-harness";
  int boot_timeout_s = 300;            ///< domain start -> agent GET /v1/health 200, seconds
  /// Deadline on each question to a hypervisor host before the first case, seconds (ours,
  /// issue 59; deadline.hpp): ssh's ConnectTimeout, and the whole capacity question (`harness
  /// plan`: "not judged: no answer in S s"; `harness run`: refused) and every connection open.
  /// How long the runner waits, not what is measured: not among the comparison settings.
  int connect_timeout_s = 30;
  /// Runner-side state (tokens, tunnel logs, console copies): <cache>/libvirt/<domain>/.
  /// "" = the harness cache (harness/vm/paths.hpp cache_root). Not a YAML key.
  std::string cache_dir;

  /// Guest names in placement order: vm0..vm{N-1}, N = the sum of hosts[].guests.
  std::vector<std::string> guest_names() const;
  /// Index into `hosts` of guest `i` (0-based, placement order). Throws std::out_of_range.
  std::size_t host_of(std::size_t guest_index) const;
};

/// Reads the libvirt keys of a campaign's `provider:` section `s` (the campaign loader has
/// already read `kind` and `overcommit` and calls s.finish() afterwards; every hosts[] entry
/// is finished here). Keys: hosts (required: non-empty list of {uri, guests}),
/// fresh_guest_per_case, accelerator, name_prefix, storage_pool, storage_path,
/// boot_timeout_s, connect_timeout_s (1..3600 s). A URI must name the qemu driver's /system
/// instance; a remote one (a host that is not this machine) must use an ssh transport (the agent is reached through an ssh
/// tunnel). Two URIs of one host identity (harness/pool/host_identity.hpp: the same URI, or
/// one that differs only in credentials or options such as keyfile=) are refused (they would
/// place guests on one host under two entries). Throws yaml::InputError "FILE:LINE:COL: field
/// provider.KEY: message".
LibvirtConfig parse_libvirt_block(yaml::Section& s);

/// The engine's EngineConfig (Campaign::engine of a `provider.kind: libvirt` campaign).
class Config : public EngineConfig {
 public:
  LibvirtConfig libvirt;
  /// {hosts: [{uri, guests}], vms, fresh_guest_per_case, accelerator, name_prefix,
  /// storage_pool, storage_path, boot_timeout_s} (not connect_timeout_s: how long the runner
  /// waits for a host's answer changes nothing measured).
  nlohmann::json settings() const override;
  std::string vm_names_source() const override;
  Checked check_vm_count(std::size_t n) const override;
  std::shared_ptr<EngineConfig> clone() const override { return std::make_shared<Config>(*this); }
};

/// Engine parse (engine.hpp): parse_libvirt_block, then vms = guest_names().
std::shared_ptr<EngineConfig> parse(yaml::Section& s, const ParseContext& ctx);

}  // namespace harness::pool::libvirt
