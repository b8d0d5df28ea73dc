#pragma once
// One local guest booted by `harness vm up` and listed in a hosts file as a real VM, the way the
// campaign vm tests that need a reused VM start (tests/vm/campaign, tests/vm/pilot): `vm down`
// of any leftover, `vm image`, `vm up --count 1 <up_flags> --hosts-file <dir>/local-hosts.yaml`,
// then <dir>/hosts.yaml with the guest's url, token file and accelerator plus `host_lines`.
// Header-only; the test links hk_vm; include as "tests/common/listed_guest.hpp".
#include <fstream>
#include <string>

#include "harness/vm/fleet.hpp"
#include "tests/common/campaign_vm.hpp"

namespace test_support {

/// The booted guest and its hosts file; `error` is "" when both are there, else what failed
/// (with the command's output).
struct ListedGuest {
  harness::vm::GuestInfo guest;
  std::string hosts_file;  ///< <vm.dir>/hosts.yaml
  std::string error;
};

/// Boots the guest and writes the hosts file. `up_flags`: extra `vm up` flags (e.g.
/// "--swapfile-mib 16"); `host_lines`: extra lines of the host entry, each "    key: value\n".
inline ListedGuest boot_listed_guest(const CampaignVm& vm, const std::string& up_flags = "",
                                     const std::string& host_lines = "") {
  ListedGuest g;
  vm.harness("vm down vm0");  // leftovers of an aborted run
  auto up = vm.harness("vm image");
  if (up.code == 0)
    up = vm.harness("vm up --count 1 " + (up_flags.empty() ? "" : up_flags + " ") + "--hosts-file " + vm.dir +
                    "/local-hosts.yaml");
  if (up.code != 0) {
    g.error = "vm image / vm up failed:\n" + up.out;
    return g;
  }
  const auto guests = harness::vm::fleet_list(vm.xdg + "/reclaim-harness");
  if (guests.size() != 1u || guests[0].pid <= 0) {
    g.error = "not one running guest after vm up (" + std::to_string(guests.size()) + " listed)";
    return g;
  }
  g.guest = guests[0];
  g.hosts_file = vm.dir + "/hosts.yaml";
  std::ofstream(g.hosts_file) << "hosts:\n  - name: vm0\n    url: " << g.guest.url << "\n    token_file: "
                              << g.guest.token_file << "\n    accelerator: " << g.guest.accelerator << "\n"
                              << host_lines;
  return g;
}

}  // namespace test_support
