// Qualification of zram (qualify.hpp): the device, its compressor, zswap. None throws: a
// read's error becomes `found`.
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

namespace {

std::vector<harness::kernel::SwapDevice> swaps_or_empty(const Fs& fs) {
  try {
    return harness::kernel::read_swaps(fs);
  } catch (const std::exception&) {
    return {};
  }
}


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

}  // namespace

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

}  // namespace qualify::checks
