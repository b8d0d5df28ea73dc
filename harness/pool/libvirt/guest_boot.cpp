// A guest's boot: its data disk, token and domain start, the wait for its agent, the boot's result,
// and the fresh boot of a case (libvirt_pool_impl.hpp; libvirt_pool.hpp "Instances").
#include "harness/pool/libvirt/libvirt_pool_impl.hpp"

#include "harness/agent/http/token.hpp"
#include "harness/digest/sha256.hpp"
#include "harness/pool/host_costs.hpp"
#include "harness/vm/paths.hpp"
#include "harness/vm/qemu.hpp"

#include <filesystem>
#include <thread>

namespace fs = std::filesystem;

namespace harness::pool::libvirt {

void LibvirtPool::Impl::start(GuestState& g, const harness::vm::Image& img, const std::vector<std::string>& cmdline, bool may_change_port) {
  try {
    HostState& h = connect(g.host);
    const StagedImage si = staged(h, img);
    const HostAccel acc = accelerator(h, si);
    g.accelerator = acc.accelerator;
    g.accelerator_reason = acc.reason;
    g.image_sha256 = img.sha256;

    Volume base = find_volume(h.pool.get(), si.disk_volume);
    if (!base) throw PoolError("volume " + si.disk_volume + " vanished from storage pool " + cfg.storage_pool);
    Volume disk = clone_volume(h.pool.get(), base.get(), disk_volume(g));
    const std::string token = harness::vm::read_file(g.token_file);
    if (token.size() != kTokenFileBytes)
      throw PoolError("token file " + g.token_file + " has " + std::to_string(token.size()) + " bytes, not " +
                      std::to_string(kTokenFileBytes));
    io().write_at(h.conn.get(), disk.get(), si.token_offset, token);
    delete_volume(h.pool.get(), console_volume(g));

    harness::vm::QemuConfig qc;  // the kernel command line local guests get
    qc.name = g.name;
    qc.accelerator = acc.accelerator;
    qc.swapfile_mib = shape.swapfile_mib;
    qc.extra_cmdline = cmdline;
    DomainSpec s;
    s.name = g.domain;
    s.type = acc.accelerator == "kvm" ? "kvm" : "qemu";
    s.vcpus = shape.vcpus;
    s.memory_mib = shape.memory_mib;
    s.kernel = si.kernel;
    s.initrd = si.initrd;
    s.cmdline = harness::vm::guest_kernel_cmdline(qc);
    s.disk = volume_path(disk.get());
    s.console_log = h.pool_dir + "/" + console_volume(g);
    std::string err;
    for (int attempt = 0; attempt < 5; ++attempt) {
      if (g.forward_port == 0 || (attempt > 0 && may_change_port)) g.forward_port = pick_port(h);
      s.forward_port = g.forward_port;
      s.owner = owner(g);
      const std::string xml = domain_xml(s);
      if (h.cfg.uri.same_machine()) g.log_from = log_size(hooks.libvirtd_log);
      g.started = Clock::now();
      Domain d(virDomainCreateXML(h.conn.get(), xml.c_str(), 0));
      g.start_s = std::chrono::duration<double>(Clock::now() - g.started).count();
      if (d) {
        g.active = true;
        return;
      }
      err = last_error();
      const bool port_taken = err.find("host forwarding") != std::string::npos || err.find("hostfwd") != std::string::npos;
      if (!port_taken || !may_change_port) break;
    }
    throw PoolError("libvirt could not start domain " + g.domain + " on " + h.cfg.uri.text + ": " + err);
  } catch (const BootError&) {
    throw;
  } catch (const std::exception& e) {
    throw BootError(g.name, e.what(), console_tail(g, 4096));
  }
}

double LibvirtPool::Impl::wait_ready(GuestState& g) {
  const HostState& h = *hosts[g.host];
  try {
    reach(g);
  } catch (const std::exception& e) {
    throw BootError(g.name, e.what(), console_tail(g, 4096));
  }
  const Guest pub = public_guest(g);
  for (;;) {
    if (hooks.health(pub)) return std::chrono::duration<double>(Clock::now() - g.started).count();
    const double el = std::chrono::duration<double>(Clock::now() - g.started).count();
    int state = 0, reason = 0;
    Domain d(virDomainLookupByName(h.conn.get(), g.domain.c_str()));
    if (!d || (virDomainGetState(d.get(), &state, &reason, 0) == 0 &&
               (state == VIR_DOMAIN_SHUTOFF || state == VIR_DOMAIN_CRASHED)))
      throw BootError(g.name, "domain " + g.domain + " on " + h.cfg.uri.text + " stopped " +
                                  std::to_string(static_cast<int>(el)) + " s after its start, before its agent answered",
                      console_tail(g, 4096));
    if (g.tunnel && !g.tunnel->running())
      throw BootError(g.name, "the ssh tunnel to " + h.cfg.uri.text + " exited (log: " + g.state_dir + "/tunnel.log)",
                      console_tail(g, 4096));
    if (el > cfg.boot_timeout_s)
      throw BootError(g.name, "agent of domain " + g.domain + " on " + h.cfg.uri.text + " not answering " +
                                  pub.url + "/v1/health within " + std::to_string(cfg.boot_timeout_s) + " s",
                      console_tail(g, 4096));
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

BootResult LibvirtPool::Impl::finish_boot(GuestState& g, double secs) {
  record_boot("libvirt", identity(g.host), g.accelerator, secs);
  BootResult r;
  r.boot_to_ready_s = secs;
  r.accelerator = g.accelerator;
  r.accelerator_reason = g.accelerator_reason;
  if (!g.log_dir.empty()) r.console_log = (fs::path(g.log_dir) / "console.log").string();
  if (start_dominates(g.start_s, secs)) {
    const HostState& h = *hosts[g.host];
    const auto findings = h.cfg.uri.same_machine()
                              ? local_slow_start_findings(hooks.host_root, hooks.libvirtd_log, g.log_from)
                              : std::vector<std::string>{};
    r.note = slow_start_note(g.domain, h.cfg.uri.text, g.start_s, secs, findings);
  }
  keep_evidence(g);
  g.last = r;
  return r;
}

void LibvirtPool::Impl::new_token(GuestState& g) {
  const std::string t = harness::agent::random_token() + "\n";
  harness::vm::write_file(g.token_file, t, 0600);
  g.token_sha256 = harness::digest::sha256_hex(t);
}

BootResult LibvirtPool::Impl::fresh_boot(GuestState& g, const BootRequest& r) {
  std::lock_guard<std::mutex> lock(g.mu);
  harness::vm::Image img;
  const bool unused = g.unused;
  g.unused = false;
  try {
    img = image(r.image_dir);
    HostState& h = connect(g.host);
    if (unused && g.last && r.cmdline.empty() && img.sha256 == g.image_sha256) {
      Domain d(virDomainLookupByName(h.conn.get(), g.domain.c_str()));
      if (d && virDomainIsActive(d.get()) == 1) {
        g.log_dir = r.log_dir.empty() ? g.state_dir : r.log_dir;
        keep_evidence(g);
        BootResult b = *g.last;
        b.console_log = (fs::path(g.log_dir) / "console.log").string();
        char note[160];
        std::snprintf(note, sizeof note,
                      "the domain booted at acquire (%.1f s boot-to-ready, no case since) serves this case: not booted twice",
                      b.boot_to_ready_s);
        b.note = note;
        return b;
      }
    }
    if (g.active) {
      try {
        save_console(g);  // the previous boot's console stays with the previous attempt
      } catch (const std::exception& e) {
        std::fprintf(out, "%s: console copy failed: %s\n", g.name.c_str(), e.what());
      }
    }
    destroy_domain(g);
    if (g.token_sha256.empty()) new_token(g);
  } catch (const BootError&) {
    throw;
  } catch (const std::exception& e) {
    throw BootError(g.name, e.what());
  }
  g.log_dir = r.log_dir.empty() ? g.state_dir : r.log_dir;
  // A tunnelled guest may move to another hypervisor port (its URL here stays the same).
  start(g, img, r.cmdline, hosts[g.host]->cfg.uri.tunnel());
  const double s = wait_ready(g);
  return finish_boot(g, s);
}

}  // namespace harness::pool::libvirt
