// Qualification of the kernel (qualify.hpp): root, kernel release and config, PSI, cgroup v2's
// memory controller, a writable memory.reclaim. None throws: a read's error becomes `found`.
#include "qualify/checks/context.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <functional>
#include <sstream>

#include <harness/build_info.hpp>

#include "harness/kernel/kernel.hpp"
#include "harness/text/join.hpp"
#include "harness/text/shell_quote.hpp"

namespace qualify::checks {

using harness::text::shell_quote;

void check_root(Ctx& x) {
  auto& c = x.add("root_access");
  const unsigned euid = x.opt.euid ? *x.opt.euid : static_cast<unsigned>(::geteuid());
  x.root = euid == 0;
  c.passed = x.root;
  c.found = "effective uid " + std::to_string(euid);
  if (!c.passed) c.fix = "run `harness qualify` (and the agent) as root: cgroup, swapon and zram writes need it";
}

void check_kernel(Ctx& x) {
  auto& c = x.add("kernel");
  guarded(
      c,
      [&] {
        const auto rel = harness::kernel::kernel_release(x.fs);
        x.rep.recorded["kernel_release"] = rel;
        if (auto v = x.fs.try_read("proc/version"); v.ok())
          x.rep.recorded["kernel_version"] = std::string(v.text.substr(0, v.text.find('\n')));
        c.found = "release " + rel;
        c.passed = true;
        auto cfg = harness::kernel::read_kernel_config(x.fs, rel);
        nlohmann::json jc = nlohmann::json::object();
        if (cfg) {
          jc["source"] = cfg->source;
          for (const char* k : {"CONFIG_PSI", "CONFIG_PSI_DEFAULT_DISABLED", "CONFIG_CGROUPS", "CONFIG_MEMCG",
                                "CONFIG_SWAP", "CONFIG_ZRAM", "CONFIG_ZSMALLOC", "CONFIG_ZRAM_DEF_COMP",
                                "CONFIG_LRU_GEN", "CONFIG_LRU_GEN_ENABLED", "CONFIG_TRANSPARENT_HUGEPAGE",
                                "CONFIG_ZSWAP", "CONFIG_ZSWAP_DEFAULT_ON"}) {
            auto v = cfg->get(k);
            jc[k] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
          }
          for (const auto& alg : known_compressors()) {  // the zram compressors' crypto items
            const std::string k = compressor_config_item(alg);
            auto v = cfg->get(k);
            jc[k] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
          }
          x.config = std::move(*cfg);
          c.found += "; config " + cfg->source;
        } else {
          jc["source"] = nullptr;
          c.found += "; no kernel config found (/boot/config-" + rel + ", /proc/config.gz): config not recorded";
        }
        x.rep.recorded["kernel_config"] = jc;
      },
      "make /proc/sys/kernel/osrelease or /proc/version readable (is /proc mounted?)");
}

void check_psi(Ctx& x) {
  auto& c = x.add("psi");
  try {
    auto p = harness::kernel::read_system_psi(x.fs, harness::kernel::PsiResource::Memory);
    c.passed = true;
    c.found = "/proc/pressure/memory readable (some total " + std::to_string(p.some.total_us) + " us)";
  } catch (const harness::kernel::IoError& e) {
    c.found = e.what();
    if (e.err() == ENOENT || e.err() == EOPNOTSUPP) {
      // Compiled out, or compiled in and switched off at boot: the kernel config and the
      // command line tell them apart (psi= is a kstrtobool: 0/n/off disable it).
      const auto psi = x.cfg("CONFIG_PSI");
      const auto boot = cmdline_param(x, "psi");
      const bool boot_off = boot && is_false_word(*boot);
      const bool default_off = x.cfg("CONFIG_PSI_DEFAULT_DISABLED").value_or("n") == "y";
      if (x.config && psi.value_or("n") != "y") {
        c.found += "; the kernel is built without PSI (CONFIG_PSI " + psi.value_or("not set") + " in " +
                   x.config->source + ")";
        c.fix = "use a kernel built with CONFIG_PSI=y (Debian cloud kernels have it)";
      } else if (boot_off) {
        c.found += "; PSI is disabled at boot (psi=" + *boot + " on the kernel command line)" +
                   (psi ? std::string("; the kernel has CONFIG_PSI=y") : std::string());
        c.fix = "boot with psi=1 (remove psi=" + *boot + " from the kernel command line)";
      } else if (default_off && !boot) {
        c.found += "; PSI is compiled in but off by default (CONFIG_PSI_DEFAULT_DISABLED=y)";
        c.fix = "boot with psi=1";
      } else if (x.config) {
        c.fix = "the kernel has CONFIG_PSI=y and nothing on the command line disables it: boot with psi=1 and check "
                "that /proc is mounted";
      } else {
        c.fix = "no kernel config found to tell: if the kernel is built with CONFIG_PSI=y, boot with psi=1; otherwise "
                "use a kernel built with CONFIG_PSI=y (Debian cloud kernels have it)";
      }
    } else {
      c.fix = "make /proc/pressure/memory readable";
    }
  } catch (const harness::kernel::Error& e) {
    c.found = e.what();
    c.fix = "unexpected /proc/pressure/memory format: report it with the file's contents";
  }
}

void check_cgroup2_memory(Ctx& x) {
  // Two checks: address them by index (a reference could dangle after the second add).
  x.add("cgroup2_memory");
  x.add("cgroup2_memory_for_children");
  const size_t ia = x.rep.checks.size() - 2, ic = x.rep.checks.size() - 1;
  try {
    auto p = harness::kernel::locate_controller(x.fs, "memory");
    x.cg2 = p.cgroup2_mount;
    x.rep.recorded["cgroup2_mount"] = p.cgroup2_mount ? nlohmann::json(*p.cgroup2_mount) : nlohmann::json(nullptr);
    auto& a = x.rep.checks[ia];
    auto& ch = x.rep.checks[ic];
    if (!p.compiled_in && !p.in_cgroup2_root) {
      a.found = "no memory controller in /proc/cgroups and none in cgroup2";
      const auto memcg = x.cfg("CONFIG_MEMCG");
      const auto disable = cmdline_param(x, "cgroup_disable");
      if (x.config && memcg.value_or("n") != "y")
        a.fix = "use a kernel built with CONFIG_MEMCG=y (CONFIG_MEMCG " + memcg.value_or("not set") + " in " +
                x.config->source + ")";
      else if (disable && disable->find("memory") != std::string::npos)
        a.fix = "remove cgroup_disable=" + *disable + " from the kernel command line" +
                (memcg ? std::string(" (the kernel has CONFIG_MEMCG=y)") : std::string());
      else
        a.fix = "use a kernel with CONFIG_MEMCG=y and boot without cgroup_disable=memory";
    } else if (p.compiled_in && !p.enabled) {
      a.found = "memory controller disabled (/proc/cgroups enabled=0)";
      a.fix = "remove cgroup_disable=memory from the kernel command line";
    } else if (p.v1_hierarchy > 0) {
      a.found = "memory controller is bound to cgroup v1 (hierarchy " + std::to_string(p.v1_hierarchy) +
                (p.v1_mountpoint ? ", mounted at " + *p.v1_mountpoint : std::string()) + ")" +
                (p.cgroup2_mount ? "; cgroup2 at " + *p.cgroup2_mount + " lacks it" : "; no cgroup2 mounted");
      a.fix = kUseGuest;
    } else if (!p.cgroup2_mount) {
      a.found = "no cgroup2 filesystem mounted";
      a.fix = "mount -t cgroup2 none /sys/fs/cgroup";
    } else if (!p.in_cgroup2_root) {
      a.found = "memory not listed in " + *p.cgroup2_mount + "/cgroup.controllers";
      a.fix = kUseGuest;
    } else {
      a.passed = true;
      a.found = "memory in " + *p.cgroup2_mount + "/cgroup.controllers";
    }
    if (!a.passed) {
      ch.found = "not applicable: memory controller unavailable in cgroup2";
      ch.fix = "fix cgroup2_memory first";
    } else if (!p.enabled_for_children) {
      ch.found = "memory not in " + *p.cgroup2_mount + "/cgroup.subtree_control";
      ch.fix = "echo +memory > " + shell_quote(*p.cgroup2_mount + "/cgroup.subtree_control");
    } else {
      ch.passed = true;
      ch.found = "memory in " + *p.cgroup2_mount + "/cgroup.subtree_control";
    }
  } catch (const std::exception& e) {
    x.rep.checks[ia].found = e.what();
    x.rep.checks[ia].fix = "check /proc/self/mounts and /proc/cgroups";
    x.rep.checks[ic].found = "not applicable";
    x.rep.checks[ic].fix = "fix cgroup2_memory first";
  }
}

void check_memory_reclaim(Ctx& x, bool memory_ok) {
  auto& c = x.add("memory_reclaim");
  if (!memory_ok || !x.cg2) {
    c.found = "not probed: cgroup2 memory controller unavailable (see cgroup2_memory)";
    c.fix = kUseGuest;
    return;
  }
  if (!x.root) {
    c.found = "not probed: needs root to create a scratch cgroup";
    c.fix = "run as root";
    return;
  }
  if (!x.opt.probe_reclaim) {
    c.found = "not probed (probe disabled)";
    c.fix = "run without disabling the memory.reclaim probe";
    return;
  }
  harness::kernel::Cgroup probe = harness::kernel::Cgroup::root(x.fs, *x.cg2).child(x.opt.probe_cgroup);
  if (probe.exists()) probe.remove();  // leftover of a crashed earlier run
  auto mk = probe.create();
  if (!mk.ok()) {
    c.found = "cannot create scratch cgroup: " + mk.message();
    c.fix = "make " + shell_quote(*x.cg2) + " writable (root, cgroup2 mounted rw)";
    return;
  }
  auto r = probe.reclaim(1ull << 20);  // "1M"
  auto rm = probe.remove();
  const std::string where = probe.fs().path(probe.file("memory.reclaim")).string();
  if (r.write.ok() || r.write.err == EAGAIN) {
    c.passed = true;
    c.found = "write of " + r.written + " to " + where + ": " +
              (r.write.ok() ? std::string("ok") : std::string("EAGAIN (nothing to reclaim: writable)"));
  } else if (r.write.err == ENOENT) {
    c.found = where + " does not exist (kernel < 5.19 or memory not enabled in " + *x.cg2 +
              "/cgroup.subtree_control)";
    c.fix = "use a 5.19+ kernel (Debian 12 cloud 6.1 has it) and echo +memory > " +
            shell_quote(*x.cg2 + "/cgroup.subtree_control");
  } else {
    c.found = "write of " + r.written + " to " + where + " failed: " + r.write.message();
    c.fix = "memory.reclaim must accept a byte count with a unit suffix as root";
  }
  if (!rm.ok()) {
    c.passed = false;
    c.found += "; scratch cgroup not removed: " + rm.message();
    c.fix = "rmdir " + shell_quote(probe.fs().path(probe.dir()).string());
  }
}

/// Active swap devices by path (empty when /proc/swaps is unreadable: checks that need it
/// say so themselves).

}  // namespace qualify::checks
