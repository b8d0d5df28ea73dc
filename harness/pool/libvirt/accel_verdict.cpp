// Each host's accelerator, decided once per run: the cached verdict of the same host, libvirt,
// qemu and image (harness/vm/accel.hpp ProbeKey), else a trial (host_accel.hpp) (libvirt_pool_impl.hpp).
#include "harness/pool/libvirt/libvirt_pool_impl.hpp"

#include "harness/digest/sha256.hpp"
#include "harness/pool/host_costs.hpp"
#include "harness/vm/qemu.hpp"

#include <filesystem>

namespace harness::pool::libvirt {

harness::vm::ProbeKey LibvirtPool::Impl::probe_key(HostState& h, const StagedImage& img) {
  harness::vm::ProbeKey k;
  k.host = host_identity(h.cfg.uri.text);
  unsigned long lib = 0, hv = 0;
  if (virConnectGetLibVersion(h.conn.get(), &lib) == 0) k.hypervisor = "libvirt " + std::to_string(lib);
  const std::string kvm = take_string(virConnectGetDomainCapabilities(h.conn.get(), nullptr, "x86_64", "q35", "kvm", 0));
  k.hypervisor += " kvm-caps " + (kvm.empty() ? std::string("none") : harness::digest::sha256_hex(kvm).substr(0, 16));
  if (virConnectGetVersion(h.conn.get(), &hv) == 0) k.qemu = "qemu " + std::to_string(hv);
  const std::string caps =
      kvm.empty() ? take_string(virConnectGetDomainCapabilities(h.conn.get(), nullptr, "x86_64", "q35", nullptr, 0)) : kvm;
  if (const auto a = caps.find("<path>"), b = caps.find("</path>"); a != std::string::npos && b != std::string::npos && b > a)
    k.qemu += " " + caps.substr(a + 6, b - a - 6);
  k.kernel_sha256 = img.sha256;
  return k;
}

HostAccel LibvirtPool::Impl::accelerator(HostState& h, const StagedImage& img) {
  std::lock_guard<std::mutex> lock(h.mu);
  if (h.accel) return *h.accel;
  TrialBoot t;
  t.conn = h.conn.get();
  t.pool = h.pool.get();
  t.io = &io();
  t.kernel = img.kernel;
  t.domain_name = cfg.name_prefix + "kvm-trial";
  if (h.cfg.uri.same_machine()) t.host_root = "/";  // this machine's /dev/kvm: what it says first
  // The verdict of an earlier run with the same key (local guests' rule, accel.hpp): an auto
  // request takes it either way, an explicit kvm only a kvm verdict (a failure is tried
  // again and reported); tcg never tries.
  const harness::vm::ProbeKey key = probe_key(h, img);
  const std::string file = (std::filesystem::path(host_costs_dir()) / key.file_name()).string();
  const auto cached = accel_request == "tcg" ? std::nullopt : harness::vm::read_probe_verdict(file, key);
  if (cached && (accel_request == "auto" || cached->kvm_ok)) {
    h.accel = HostAccel{cached->kvm_ok ? "kvm" : "tcg",
                        cached->detail + "; cached verdict of " + utc_date(cached->measured_unix) + ", same host, libvirt, "
                        "qemu and image"};
  } else {
    const auto t0 = Clock::now();
    h.accel = hooks.host_accelerator(t, accel_request);
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    if (accel_request != "tcg") {
      const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch()).count();
      harness::vm::write_probe_verdict(file, key, {h.accel->accelerator == "kvm", h.accel->reason, secs, now});
      record_kvm_trial("libvirt", key.host, secs);
    }
  }
  std::fprintf(out, "libvirt %s: accelerator: %s (%s)\n", h.cfg.uri.text.c_str(), h.accel->accelerator.c_str(),
               h.accel->reason.c_str());
  if (h.accel->accelerator == "tcg") std::fprintf(out, "%s\n", harness::vm::tcg_warning().c_str());
  return *h.accel;
}

}  // namespace harness::pool::libvirt
