// Qualification of swap (qualify.hpp): the swapfile (a trial swapon) and clean swap at the
// start. None throws: a read's error becomes `found`.
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

}  // namespace

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

}  // namespace qualify::checks
