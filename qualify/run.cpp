// Qualification checks (qualify.hpp). Each check_* function adds one Check; none throws:
// harness::kernel::Error from a read becomes the check's `found`.
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
#include "qualify/qualify.hpp"
#include "harness/text/shell_quote.hpp"

namespace qualify {
namespace {

using harness::kernel::Fs;
using harness::text::shell_quote;

const char* kUseGuest =
    "boot the host with systemd.unified_cgroup_hierarchy=1 (or cgroup_no_v1=memory) so cgroup2 gets the "
    "memory controller, or run in a guest (`harness vm up`)";

std::string mib(std::uint64_t bytes) {
  char b[64];
  std::snprintf(b, sizeof b, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return b;
}

struct Ctx {
  const Options& opt;
  Fs fs;
  Report& rep;
  std::optional<std::string> cg2;  // cgroup2 mount point, absolute
  bool root = false;
  std::optional<harness::kernel::KernelConfig> config;  // the running kernel's .config, when found

  /// Value of CONFIG_X in the kernel config ("y", "m", "n", ...); nullopt when no config was
  /// found or it does not mention the item.
  std::optional<std::string> cfg(const char* item) const { return config ? config->get(item) : std::nullopt; }

  Check& add(std::string name, bool required = true) {
    rep.checks.push_back(Check{std::move(name), required, false, "", ""});
    return rep.checks.back();
  }
};

/// Runs `body`; a harness::kernel::Error / std::exception thrown inside becomes found + fix.
void guarded(Check& c, const std::function<void()>& body, const std::string& fix_on_error) {
  try {
    body();
  } catch (const std::exception& e) {
    c.passed = false;
    c.found = e.what();
    c.fix = fix_on_error;
  }
}

/// The value of the last `name=` parameter on the kernel command line (the kernel honours the
/// last), nullopt when absent or /proc/cmdline is unreadable.
std::optional<std::string> cmdline_param(const Ctx& x, const std::string& name) {
  std::optional<std::string> v;
  try {
    std::istringstream in(harness::kernel::kernel_cmdline(x.fs));
    for (std::string w; in >> w;)
      if (w.rfind(name + "=", 0) == 0) v = w.substr(name.size() + 1);
  } catch (const std::exception&) {
    // no readable cmdline: the parameter is reported absent
  }
  return v;
}

/// kstrtobool's false: 0, n, N, off (and "no", "false" as people write them).
bool is_false_word(const std::string& v) {
  return v == "0" || v == "n" || v == "N" || v == "off" || v == "no" || v == "false";
}

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
std::vector<harness::kernel::SwapDevice> swaps_or_empty(const Fs& fs) {
  try {
    return harness::kernel::read_swaps(fs);
  } catch (const std::exception&) {
    return {};
  }
}

void check_zram(Ctx& x) {
  x.add("zram");
  // Informational: zram devices the harness did not create (zram-tools, a zram generator,
  // log2ram). The harness never touches them (ours); clean_swap judges them
  // when they are active swap.
  x.add("foreign_zram", false);
  const size_t ic = x.rep.checks.size() - 2, iforeign = x.rep.checks.size() - 1;
  guarded(
      x.rep.checks[ic],
      [&] {
        auto& c = x.rep.checks[ic];
        auto& f = x.rep.checks[iforeign];
        const bool control = harness::kernel::zram_control_present(x.fs);
        const auto ids = harness::kernel::list_zram_devices(x.fs);
        const auto owned = harness::kernel::owned_zram(x.fs);
        const auto swaps = swaps_or_empty(x.fs);
        nlohmann::json devs = nlohmann::json::array();
        std::string foreign;
        bool foreign_swap = false;  // a foreign device in use as swap
        for (int id : ids) {
          harness::kernel::Zram z(x.fs, id);
          const bool ours = owned && owned->id == id;
          nlohmann::json d{{"device", z.dev_path()}, {"owner", ours ? "harness" : "foreign"}};
          if (auto r = x.fs.try_read(z.sysfs_dir() + "/initstate"); r.ok()) d["initialized"] = z.initialized();
          if (auto r = x.fs.try_read(z.sysfs_dir() + "/disksize"); r.ok()) d["disksize_bytes"] = z.disksize_bytes();
          if (auto r = x.fs.try_read(z.sysfs_dir() + "/comp_algorithm"); r.ok()) {
            auto a = z.comp_algorithm();
            d["comp_algorithm"] = a.selected;
            if (!x.rep.recorded.contains("zram_algorithms")) x.rep.recorded["zram_algorithms"] = a.available;
          }
          const harness::kernel::SwapDevice* sw = nullptr;
          for (const auto& s : swaps)
            if (s.path == z.dev_path()) sw = &s;
          d["swap_active"] = sw != nullptr;
          if (sw) {
            d["swap_used_kib"] = sw->used_kib;
            d["swap_priority"] = sw->priority;
          }
          devs.push_back(d);
          if (!ours && sw) foreign_swap = true;
          if (!ours)
            foreign += (foreign.empty() ? "" : ", ") + z.dev_path() +
                       (sw ? " (active swap, priority " + std::to_string(sw->priority) + ", " +
                                 std::to_string(sw->used_kib) + " KiB used)"
                           : (d.value("initialized", false) ? " (initialised, not swap)" : " (unconfigured)"));
        }
        x.rep.recorded["zram_devices"] = devs;
        c.passed = control || !ids.empty();
        c.found = std::string(control ? "/sys/class/zram-control present" : "/sys/class/zram-control absent") +
                  ", " + std::to_string(ids.size()) + " zram device(s)" +
                  (owned ? "; the harness owns zram" + std::to_string(owned->id) + " (" + harness::kernel::to_string(owned->how) +
                               ")"
                         : "");
        if (c.passed && !control)
          c.found += "; without hot_add the harness borrows an unused device (load zram with num_devices=N to "
                     "have a spare)";
        if (!c.passed) {
          const auto zram = x.cfg("CONFIG_ZRAM");
          if (x.config && zram.value_or("n") != "y" && zram.value_or("n") != "m")
            c.fix = "use a kernel built with CONFIG_ZRAM=y or m (CONFIG_ZRAM " + zram.value_or("not set") + " in " +
                    x.config->source + ")";
          else
            c.fix =
                "load zram: modprobe zram (or insmod zsmalloc.ko, lzo.ko, lzo-rle.ko, zram.ko from the kernel "
                "package's lib/modules)";
        }
        // Informational: an unconfigured or idle foreign device (the zram0 a module load
        // creates) is harmless, since the harness never touches it; one in use as swap is
        // worth a look (clean_swap judges it against the case's priorities).
        f.passed = !foreign_swap;
        f.found = foreign.empty() ? "none" : "not created by the harness, left untouched: " + foreign;
      },
      "check /sys/block/zram*");
}

/// Proves the swapfile can be swapped on: swapon(2) at the lowest priority, then
/// swapoff(2), only while no swap is active (never disturbs a running case or a device
/// somebody else uses). The result is part of the swapfile check.
void trial_swapon(Ctx& x, Check& c) {
  std::vector<harness::kernel::SwapDevice> swaps;
  try {
    swaps = harness::kernel::read_swaps(x.fs);
  } catch (const std::exception& e) {
    c.found += "; trial swapon skipped: " + std::string(e.what());
    return;
  }
  if (!swaps.empty()) {
    c.found += "; trial swapon skipped: " + std::to_string(swaps.size()) + " swap device(s) already active";
    return;
  }
  const auto on = harness::kernel::swapon(x.fs, x.opt.swapfile_path, 0);
  if (!on.ok()) {
    c.passed = false;
    c.found += "; trial swapon failed: " + on.message();
    if (on.err == EINVAL)
      c.fix = "the kernel refuses a swapfile on this filesystem (tmpfs, or copy-on-write btrfs) or with holes: put "
              "it on ext4/xfs, or on btrfs create it empty with `chattr +C`, then fill it with dd from /dev/zero and "
              "mkswap";
    else if (on.err == EPERM)
      c.fix = "run as root (swapon needs CAP_SYS_ADMIN)";
    else if (on.err == EBUSY)
      c.fix = "the file is already in use as swap elsewhere: swapoff it first";
    else
      c.fix = "swapon " + shell_quote(x.opt.swapfile_path) + " must succeed as root";
    return;
  }
  const auto off = harness::kernel::swapoff(x.fs, x.opt.swapfile_path);
  if (!off.ok()) {
    c.passed = false;
    c.found += "; trial swapoff failed: " + off.message();
    c.fix = "swapoff " + shell_quote(x.opt.swapfile_path) + " by hand, then qualify again";
    return;
  }
  c.found += "; trial swapon/swapoff ok";
}

/// Where compressor `alg` is available to zram ("" = nowhere): a zram device lists it, or
/// /proc/crypto has it, or the kernel has its module. `seen` collects the devices' algorithms.
std::string compressor_source(Ctx& x, const std::string& alg, std::vector<std::string>& seen) {
  std::string where;
  try {
    for (int id : harness::kernel::list_zram_devices(x.fs)) {
      harness::kernel::Zram z(x.fs, id);
      for (const auto& a : z.comp_algorithm().available) {
        if (std::find(seen.begin(), seen.end(), a) == seen.end()) seen.push_back(a);
        if (a == alg && where.empty())
          where = (z.sysfs_dir().rfind('/', 0) == 0 ? "" : "/") + z.sysfs_dir() + "/comp_algorithm";
      }
    }
  } catch (const std::exception&) {
    // no readable device: the other sources decide
  }
  if (where.empty()) {
    const auto crypto = x.fs.try_read("/proc/crypto");
    if (crypto.ok()) {
      std::istringstream in(crypto.text);
      for (std::string line; std::getline(in, line);)
        if (line.rfind("name", 0) == 0 && line.size() > alg.size() &&
            line.compare(line.size() - alg.size(), alg.size(), alg) == 0 &&
            line.find(": " + alg) != std::string::npos) {
          where = "/proc/crypto";
          break;
        }
    }
  }
  if (where.empty() && x.rep.recorded.contains("kernel_release") && x.rep.recorded["kernel_release"].is_string()) {
    const std::string dir = "/lib/modules/" + x.rep.recorded["kernel_release"].get<std::string>() + "/kernel/crypto/";
    for (const char* ext : {".ko", ".ko.xz", ".ko.zst", ".ko.gz"})
      if (x.fs.exists(dir + alg + ext)) where = dir + alg + ext;
  }
  return where;
}

/// recorded.compressors: every compressor zram knows -> where it is available (null: nowhere),
/// so the fleet preflight can compare the campaign's compressor across VMs.
void record_compressors(Ctx& x) {
  nlohmann::json j = nlohmann::json::object();
  std::vector<std::string> seen;
  for (const auto& alg : known_compressors()) {
    const auto where = compressor_source(x, alg, seen);
    j[alg] = where.empty() ? nlohmann::json(nullptr) : nlohmann::json(where);
  }
  x.rep.recorded["compressors"] = j;
}

void check_zram_algorithm(Ctx& x) {
  if (x.opt.zram_algorithm.empty()) return;
  auto& c = x.add("zram_algorithm");
  const std::string& alg = x.opt.zram_algorithm;
  std::vector<std::string> seen;
  const std::string where = compressor_source(x, alg, seen);
  c.passed = !where.empty();
  const std::string avail = harness::text::join(seen);
  c.found = c.passed ? alg + " available (" + where + ")"
                     : alg + " not found in zram comp_algorithm (" + (avail.empty() ? "no device" : avail) +
                           "), /proc/crypto or the kernel's modules";
  if (!c.passed) {
    const std::string item = compressor_config_item(alg);
    const auto v = item.empty() ? std::nullopt : x.cfg(item.c_str());
    if (x.config && !item.empty() && v.value_or("n") != "y" && v.value_or("n") != "m")
      c.fix = "the kernel is built without " + alg + " (" + item + " " + v.value_or("not set") + " in " +
              x.config->source + "): use a kernel with " + item + "=y or m, or choose one of: " +
              (avail.empty() ? std::string("lzo, lzo-rle, lz4, zstd") : avail);
    else
      c.fix = "load the compressor (modprobe " + shell_quote(alg) +
              ", or insmod its module from lib/modules) or choose one of: " +
              (avail.empty() ? std::string("lzo, lzo-rle, lz4, zstd") : avail);
  }
}

// zswap in front of the swap devices keeps the pages zram should receive in its own
// compressed pool (ours: a distro default on some kernels): qualification fails while it is
// enabled. /sys/module/zswap absent = not built in.
void check_zswap(Ctx& x) {
  auto& c = x.add("zswap");
  const auto r = x.fs.try_read("/sys/module/zswap/parameters/enabled");
  if (!r.ok()) {
    x.rep.recorded["zswap_enabled"] = "absent";
    c.passed = true;
    c.found = "zswap not in this kernel (no /sys/module/zswap/parameters/enabled)";
    return;
  }
  std::string v = r.text.substr(0, r.text.find_first_of("\n "));
  x.rep.recorded["zswap_enabled"] = v;
  c.passed = is_false_word(v);
  const auto boot = cmdline_param(x, "zswap.enabled");
  if (c.passed) {
    c.found = "zswap disabled (/sys/module/zswap/parameters/enabled = " + v + ")";
    return;
  }
  c.found = "zswap enabled (/sys/module/zswap/parameters/enabled = " + v + ")" +
            (boot ? "; zswap.enabled=" + *boot + " on the kernel command line"
                  : x.cfg("CONFIG_ZSWAP_DEFAULT_ON").value_or("n") == "y" ? std::string("; CONFIG_ZSWAP_DEFAULT_ON=y")
                                                                          : std::string()) +
            ": it would take the pages zram should receive";
  c.fix = "boot with zswap.enabled=0" + (boot ? " (instead of zswap.enabled=" + *boot + ")" : std::string()) +
          ", or echo 0 > /sys/module/zswap/parameters/enabled before the campaign";
}

void check_swapfile(Ctx& x) {
  auto& c = x.add("swapfile");
  if (x.opt.swapfile_path.empty()) {
    c.found = "no swapfile named";
    c.fix = "pass --swapfile PATH (the campaign's backend.swapfile path)";
    return;
  }
  auto v = harness::kernel::validate_swapfile(x.fs, x.opt.swapfile_path);
  c.passed = v.ok();
  c.found = x.opt.swapfile_path + (v.exists ? ": " + mib(v.size_bytes) + ", " + mib(v.allocated_bytes) + " allocated, " +
                                                  (v.has_signature ? "swap signature present" : "no swap signature")
                                            : ": missing");
  c.fix += harness::text::join(v.problems, "; ");
  if (c.passed && x.opt.trial_swapon && (x.opt.root == "/" || x.opt.trial_swapon_under_root)) trial_swapon(x, c);
}

void check_disk(Ctx& x) {
  auto& c = x.add("free_disk");
  // The case's output directory may not exist yet (the agent qualifies a case before it
  // creates it): judge the filesystem it will be created on, its nearest existing ancestor.
  auto p = x.fs.path(x.opt.disk_path);
  std::error_code ec;
  while (!std::filesystem::exists(p, ec) && p.has_parent_path() && p != p.parent_path()) p = p.parent_path();
  struct statvfs sv;
  if (::statvfs(p.c_str(), &sv) != 0) {
    c.found = p.string() + ": " + std::strerror(errno);
    c.fix = "pass --disk-path DIR for the directory holding the DB, traces and swapfile";
    return;
  }
  const std::uint64_t free_b = static_cast<std::uint64_t>(sv.f_bavail) * sv.f_frsize;
  c.passed = free_b >= x.opt.min_free_disk_bytes;
  c.found = mib(free_b) + " free at " + p.string() + " (need " + mib(x.opt.min_free_disk_bytes) + ")";
  if (!c.passed) c.fix = "free space on that filesystem or point --disk-path at a larger one";
}

// Clean starting swap (study), with device ownership (rules ours; a leftover is named
// by its cause, not its symptom):
//  - a device of the harness (the campaign's swapfile, the zram device of the ownership
//    marker) that is active is a leftover of an earlier case: not clean, whatever its
//    used column says (0 after an OOM kill does not make it releasable);
//  - any active device with pages in use is not clean;
//  - an active device the harness does not own (zram-tools' zram0) is left alone; it must
//    sit below the case's lowest priority (Options::case_min_swap_priority) so the kernel
//    never puts the case's pages there.
void check_clean_swap(Ctx& x) {
  auto& c = x.add("clean_swap");
  guarded(
      c,
      [&] {
        auto swaps = harness::kernel::read_swaps(x.fs);
        const auto owned = harness::kernel::owned_zram(x.fs);
        nlohmann::json js = nlohmann::json::array();
        std::vector<std::string> problems, fixes;
        for (const auto& s : swaps) {
          const bool ours = (!x.opt.swapfile_path.empty() && s.path == x.opt.swapfile_path) ||
                            (owned && s.path == harness::kernel::Zram(x.fs, owned->id).dev_path());
          js.push_back({{"path", s.path}, {"type", s.type}, {"size_kib", s.size_kib}, {"used_kib", s.used_kib},
                        {"priority", s.priority}, {"owner", ours ? "harness" : "foreign"}});
          const std::string used = std::to_string(s.used_kib) + " KiB used";
          if (ours) {
            problems.push_back(s.path + " of the harness still active (" + used + "): a leftover of an earlier case");
            fixes.push_back("swapoff " + shell_quote(s.path) +
                            " (ENOMEM means a process holds swapped memory: see VmSwap in /proc/*/status)");
          } else if (s.used_kib > 0) {
            problems.push_back("swap in use: " + s.path + " " + std::to_string(s.used_kib) + " KiB");
            fixes.push_back("stop what uses " + shell_quote(s.path) + " or swapoff it");
          } else if (x.opt.case_min_swap_priority && s.priority >= *x.opt.case_min_swap_priority) {
            problems.push_back(s.path + " (not the harness's) is active at priority " + std::to_string(s.priority) +
                               ", not below the case's " + std::to_string(*x.opt.case_min_swap_priority) +
                               ": the case's pages would go there");
            fixes.push_back("swapoff " + shell_quote(s.path) + " or swap it on at a lower priority (swapon -p -1 " +
                            shell_quote(s.path) + ")");
          }
        }
        x.rep.recorded["swaps"] = js;
        c.passed = problems.empty();
        if (swaps.empty())
          c.found = "no swap active";
        else if (c.passed)
          c.found = std::to_string(swaps.size()) + " swap device(s) active, none in use and none of the harness's" +
                    (x.opt.case_min_swap_priority
                         ? ", all below the case's priority " + std::to_string(*x.opt.case_min_swap_priority)
                         : std::string());
        else
          c.found += harness::text::join(problems, "; ");
        c.fix += harness::text::join(fixes, "; ");
      },
      "make /proc/swaps readable");
}

void check_commit(Ctx& x) {
  auto& c = x.add("source_commit");
  const std::string have = x.opt.source_commit ? *x.opt.source_commit : harness::build::kSourceCommit;
  const bool dirty = x.opt.source_dirty ? *x.opt.source_dirty : harness::build::kSourceDirty;
  x.rep.recorded["source_commit"] = have;
  x.rep.recorded["source_dirty"] = dirty;
  x.rep.recorded["pinned_commit"] = x.opt.pinned_commit;
  if (!valid_pinned_commit(x.opt.pinned_commit)) {
    c.found = "pinned commit '" + x.opt.pinned_commit + "' is neither 'any' nor 40 hex digits";
    c.fix = "set the campaign's pinned commit to a full git commit id or 'any'";
  } else if (x.opt.pinned_commit == "any") {
    c.passed = true;
    c.found = "pinned 'any'; build from " + have + (dirty ? " (dirty)" : "");
  } else {
    std::string pin = x.opt.pinned_commit;
    for (auto& ch : pin) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (pin != have) {
      c.found = "build is from " + have + ", campaign pins " + pin;
      c.fix = "git checkout " + shell_quote(pin) + " and rebuild the harness on this host";
    } else if (dirty) {
      c.found = "build is from " + have + " with uncommitted changes";
      c.fix = "rebuild from a clean checkout of " + pin;
    } else {
      c.passed = true;
      c.found = "build is from the pinned commit " + have;
    }
  }
}

void check_vm_shape(Ctx& x) {
  x.add("vcpus");
  const size_t icpu = x.rep.checks.size() - 1;
  x.add("memory");
  const size_t imem = x.rep.checks.size() - 1;
  guarded(
      x.rep.checks[icpu],
      [&] {
        auto& c = x.rep.checks[icpu];
        const unsigned n = harness::kernel::read_online_cpus(x.fs);
        c.passed = n == x.opt.vcpus;
        c.found = std::to_string(n) + " online CPU(s), campaign shape " + std::to_string(x.opt.vcpus);
        if (!c.passed) c.fix = "give the VM exactly " + std::to_string(x.opt.vcpus) + " vCPU(s) (qemu -smp N)";
      },
      "make /sys/devices/system/cpu/online or /proc/cpuinfo readable");
  guarded(
      x.rep.checks[imem],
      [&] {
        auto& c = x.rep.checks[imem];
        auto mi = harness::kernel::read_meminfo(x.fs);
        auto total = mi.get("MemTotal");
        if (!total) {
          c.found = "/proc/meminfo has no MemTotal";
          c.fix = "make /proc/meminfo readable";
          return;
        }
        const double have_mib = static_cast<double>(*total) / 1024.0;
        const double want = static_cast<double>(x.opt.memory_mib);
        x.rep.recorded["mem_total_kib"] = *total;
        c.passed = std::fabs(have_mib - want) <= x.opt.memory_tolerance * want;
        char b[200];
        std::snprintf(b, sizeof b, "MemTotal %.0f MiB, campaign shape %.0f MiB (tolerance %.0f%%)", have_mib, want,
                      x.opt.memory_tolerance * 100);
        c.found = b;
        if (!c.passed)
          c.fix = "give the VM " + std::to_string(x.opt.memory_mib) + " MiB (qemu -m " + std::to_string(x.opt.memory_mib) +
                  ")";
      },
      "make /proc/meminfo readable");
}

/// Unjudged facts: cmdline, THP, swappiness, clocksource, MGLRU.
void record(Ctx& x) {
  auto rec = [&](const char* key, const std::function<nlohmann::json()>& f) {
    try {
      x.rep.recorded[key] = f();
    } catch (const std::exception& e) {
      x.rep.recorded[key] = std::string("unavailable: ") + e.what();
    }
  };
  rec("kernel_cmdline", [&] { return nlohmann::json(harness::kernel::kernel_cmdline(x.fs)); });
  rec("thp_enabled", [&] { return nlohmann::json(harness::kernel::read_thp_enabled(x.fs).selected); });
  rec("swappiness", [&] { return nlohmann::json(harness::kernel::read_swappiness(x.fs)); });
  rec("clocksource", [&] { return nlohmann::json(harness::kernel::read_clocksource(x.fs)); });
  rec("mglru_enabled", [&] {
    auto m = harness::kernel::read_mglru_enabled(x.fs);
    return m ? nlohmann::json(*m) : nlohmann::json("absent (no CONFIG_LRU_GEN)");
  });
  if (!x.rep.recorded.contains("zram_algorithms")) x.rep.recorded["zram_algorithms"] = nlohmann::json::array();
}

}  // namespace

const std::vector<std::string>& known_compressors() {
  static const std::vector<std::string> v{"lzo", "lzo-rle", "lz4", "lz4hc", "zstd", "842", "deflate"};
  return v;
}

std::string compressor_config_item(const std::string& alg) {
  if (alg == "lzo" || alg == "lzo-rle") return "CONFIG_CRYPTO_LZO";  // crypto/lzo.c and lzo-rle.c
  if (alg == "lz4") return "CONFIG_CRYPTO_LZ4";
  if (alg == "lz4hc") return "CONFIG_CRYPTO_LZ4HC";
  if (alg == "zstd") return "CONFIG_CRYPTO_ZSTD";
  if (alg == "842") return "CONFIG_CRYPTO_842";
  if (alg == "deflate") return "CONFIG_CRYPTO_DEFLATE";
  return "";
}

bool valid_pinned_commit(const std::string& s) {
  if (s == "any") return true;
  if (s.size() != 40) return false;
  for (char ch : s)
    if (!std::isxdigit(static_cast<unsigned char>(ch))) return false;
  return true;
}

Report run(const Options& opt) {
  Report rep;
  rep.checks.reserve(16);
  Ctx x{opt, Fs(opt.root), rep, std::nullopt, false, std::nullopt};
  check_root(x);
  check_kernel(x);
  check_psi(x);
  check_cgroup2_memory(x);
  const bool memory_ok = rep.checks.back().passed && rep.checks[rep.checks.size() - 2].passed;  // both cgroup2 checks
  check_memory_reclaim(x, memory_ok);
  check_zram(x);
  check_zram_algorithm(x);
  record_compressors(x);
  check_zswap(x);
  check_swapfile(x);
  check_disk(x);
  check_clean_swap(x);
  check_commit(x);
  check_vm_shape(x);
  record(x);
  rep.passed = true;
  for (const auto& c : rep.checks)
    if (c.required && !c.passed) rep.passed = false;
  return rep;
}

}  // namespace qualify
