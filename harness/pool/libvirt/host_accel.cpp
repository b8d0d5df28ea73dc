// kvm or TCG for a hypervisor, by domain capabilities and a trial boot (host_accel.hpp).
#include "harness/pool/libvirt/host_accel.hpp"

#include "harness/pool/libvirt/domain_xml.hpp"
#include "harness/pool/pool.hpp"
#include "harness/vm/accel.hpp"

#include <chrono>
#include <cstdio>
#include <thread>

namespace harness::pool::libvirt {

namespace {

constexpr const char* kBanner = "Linux version";

struct Trial {
  bool ok = false;
  std::string detail;
};

Trial trial_boot(const TrialBoot& t) {
  const std::string console_name = t.domain_name + "-console.log";
  const std::string console = pool_path(t.pool) + "/" + console_name;
  if (Domain old{virDomainLookupByName(t.conn, t.domain_name.c_str())}) virDomainDestroy(old.get());  // an earlier runner's
  DomainSpec s;
  s.name = t.domain_name;
  s.type = "kvm";
  s.memory_mib = 256;
  s.kernel = t.kernel;
  s.cmdline = "console=ttyS0 panic=-1";
  s.console_log = console;
  const std::string xml = domain_xml(s);
  const auto t0 = std::chrono::steady_clock::now();
  // libvirt creates the console file even when the domain then fails to start: delete it
  // on every way out.
  auto drop_console = [&] {
    virStoragePoolRefresh(t.pool, 0);
    try {
      delete_volume(t.pool, console_name);
    } catch (const std::exception&) {
      // a leftover console file of the trial costs nothing
    }
  };
  Domain d(virDomainCreateXML(t.conn, xml.c_str(), 0));
  if (!d) {
    Trial failed{false, "libvirt could not start a kvm domain: " + last_error()};
    drop_console();
    return failed;
  }
  Trial r;
  for (;;) {
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string out;
    virStoragePoolRefresh(t.pool, 0);
    if (Volume v = find_volume(t.pool, console_name)) {
      try {
        out = t.io->read_tail(t.conn, v.get(), 1 << 16);
      } catch (const std::exception&) {
        // not readable yet: poll again
      }
    }
    if (out.find(kBanner) != std::string::npos) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "kvm trial domain printed the kernel banner after %.1f s", el);
      r = {true, buf};
      break;
    }
    int state = 0, reason = 0;
    if (virDomainGetState(d.get(), &state, &reason, 0) != 0 || state == VIR_DOMAIN_SHUTOFF || state == VIR_DOMAIN_CRASHED) {
      r = {false, "kvm trial domain stopped after " + std::to_string(static_cast<int>(el)) +
                      " s before the kernel banner (qemu exited; see the hypervisor's /var/log/libvirt/qemu/" +
                      t.domain_name + ".log)"};
      break;
    }
    if (el > t.timeout_s) {
      r = {false, "kvm trial domain printed " +
                      (out.empty() ? std::string("nothing") : std::to_string(out.size()) + " bytes but no kernel banner") +
                      " on its serial console within " + std::to_string(t.timeout_s) + " s"};
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  virDomainDestroy(d.get());
  drop_console();
  return r;
}

}  // namespace

HostAccel choose_host_accelerator(const TrialBoot& t, const std::string& request) {
  const std::string uri = take_string(virConnectGetURI(t.conn));
  if (request == "tcg") return {"tcg", "tcg requested"};
  const std::string caps = take_string(virConnectGetDomainCapabilities(t.conn, nullptr, "x86_64", "q35", "kvm", 0));
  if (caps.empty() || caps.find("<domain>kvm</domain>") == std::string::npos) {
    const std::string why = uri + " offers no kvm domain for x86_64/q35 (" +
                            (caps.empty() ? "virConnectGetDomainCapabilities: " + last_error() : std::string("not in its domain capabilities")) + ")";
    if (request == "kvm") throw PoolError("accelerator kvm requested: " + why);
    return {"tcg", "auto: " + why};
  }
  if (!t.host_root.empty()) {
    if (const auto host = harness::vm::check_kvm_host(t.host_root); !host) {
      const std::string& why = host.error().message;
      if (request == "kvm") throw PoolError("accelerator kvm requested: " + uri + " offers kvm but " + why + " (use accelerator tcg or auto)");
      return {"tcg", "auto: " + uri + " offers kvm but " + why + "; using TCG"};
    }
  }
  const Trial tr = trial_boot(t);
  if (tr.ok) return {"kvm", request + ": " + uri + " " + tr.detail};
  if (request == "kvm")
    throw PoolError("accelerator kvm requested: " + uri + " offers kvm but " + tr.detail + " (use accelerator tcg, or fix nested virtualization)");
  return {"tcg", "auto: " + uri + " offers kvm but " + tr.detail + "; falling back to TCG"};
}

}  // namespace harness::pool::libvirt
