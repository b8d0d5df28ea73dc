#pragma once
// Reader of the hosts file (format: harness/vm/HOSTS.md), as `harness run` needs it.
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
};

/// Parses a hosts file. Unknown keys rejected; errors read "FILE:LINE:COL: field hosts[i].x: ...".
std::vector<Host> load_hosts(const std::string& path);

}  // namespace harness::campaign
