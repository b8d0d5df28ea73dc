#pragma once
// Reader of the hosts file (format: harness/vm/HOSTS.md), as `harness run` needs it.
#include "harness/agent/client.hpp"

#include <string>
#include <vector>

namespace harness::campaign {

/// One VM agent. `name` is the stratum name used by the campaign (vm0..vmN).
struct Host {
  std::string name;
  std::string url;          ///< agent base URL, e.g. http://127.0.0.1:40123
  std::string token_file;   ///< bearer token file (mode 0600)
  std::string accelerator;  ///< kvm | tcg | real
  bool local = false;       ///< booted by `harness vm up`; `harness vm reboot NAME` works
  std::string tls_ca_file;     ///< https: CA bundle (PEM) that signed the agent certificate
  std::string tls_pin_sha256;  ///< https: agent public-key pin ("sha256//BASE64", `harness fleet pin`)
  bool insecure_plain_http = false;  ///< allow http:// to a non-loopback agent (token in clear text)
  /// Reboot the VM through its agent (POST /v1/reboot; agent --allow-reboot) before every
  /// case, and wait for a new boot id (issue 13: a reused VM starts each case fresh).
  bool reboot_between_cases = false;
  int reboot_timeout_s = 600;  ///< wait for the VM to answer with a new boot id, s
};

/// `base` with the host's TLS settings (CA file, pin, plain-HTTP permission) applied: what
/// every AgentClient for this host is built with.
agent::ClientOptions client_options(const Host& h, agent::ClientOptions base = {});

/// Parses a hosts file. Unknown keys rejected; errors read "FILE:LINE:COL: field hosts[i].x: ...".
std::vector<Host> load_hosts(const std::string& path);

}  // namespace harness::campaign
