// Qualification of the host around the kernel (qualify.hpp): free disk, the source commit, the
// VM shape, and what the report records beside the checks. None throws.
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

}  // namespace qualify::checks
