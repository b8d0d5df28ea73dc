// Environment record of a case (docs/DESIGN.md "The case"): what ran the case, so
// a result can be traced to its kernel, guest and accelerator.
#include "harness/case/host/environment.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <exception>
#include <sstream>

#include "harness/case/host/accelerator_detect.hpp"
#include "harness/kernel/procfs.hpp"

namespace harness::case_ {

std::int64_t page_size_bytes() { return static_cast<std::int64_t>(::sysconf(_SC_PAGESIZE)); }

std::string cmdline_value(const harness::kernel::Fs& fs, const std::string& key, const std::string& absent) {
  const std::string prefix = key + "=";
  try {
    std::istringstream in(harness::kernel::kernel_cmdline(fs));
    for (std::string w; in >> w;)
      if (w.rfind(prefix, 0) == 0) return w.substr(prefix.size());
  } catch (const std::exception&) {
    // no readable cmdline: the caller's `absent` value is recorded, as for a missing key
  }
  return absent;
}

std::string accelerator_from(const harness::kernel::Fs& fs, const std::string& flag) {
  if (!flag.empty()) return flag;
  const std::string told = cmdline_value(fs, "harness.accelerator", "");
  return told.empty() ? detect_accelerator(fs) : told;
}

nlohmann::json collect_environment(const harness::kernel::Fs& fs, const std::string& accelerator) {
  nlohmann::json env;
  auto item = [&](const char* key, auto&& fn) {
    try {
      env[key] = fn();
    } catch (const std::exception& e) {
      env[key] = {{"error", e.what()}};
    }
  };
  struct utsname u{};
  if (::uname(&u) == 0)
    env["uname"] = {{"sysname", u.sysname}, {"nodename", u.nodename}, {"release", u.release},
                    {"version", u.version}, {"machine", u.machine}};
  item("kernel_release", [&] { return harness::kernel::kernel_release(fs); });
  item("cmdline", [&] { return harness::kernel::kernel_cmdline(fs); });
  item("thp_enabled", [&] { return harness::kernel::read_thp_enabled(fs).selected; });
  item("swappiness", [&] { return harness::kernel::read_swappiness(fs); });
  item("clocksource", [&] { return harness::kernel::read_clocksource(fs); });
  item("mglru_enabled", [&] {
    auto m = harness::kernel::read_mglru_enabled(fs);
    return m ? nlohmann::json(*m) : nlohmann::json("absent");
  });
  // zswap in front of zram would take the pages zram should get (qualification fails on it).
  item("zswap_enabled", [&] {
    const auto r = fs.try_read("/sys/module/zswap/parameters/enabled");
    return r.ok() ? r.text.substr(0, r.text.find_first_of("\n ")) : std::string("absent");
  });
  item("online_cpus", [&] { return harness::kernel::read_online_cpus(fs); });
  item("memtotal_kib", [&] {
    auto v = harness::kernel::read_meminfo(fs).get("MemTotal");
    return v ? nlohmann::json(*v) : nlohmann::json();
  });
  env["page_size_bytes"] = page_size_bytes();
  env["accelerator"] = accelerator;
  // qemu cache mode of the data disk (swapfile, out dir): `harness vm` guests say it on
  // the kernel command line (harness/vm/qemu.cpp); elsewhere it is not known.
  env["data_disk_cache"] = cmdline_value(fs, "harness.data_disk_cache", "unknown");
  return env;
}

}  // namespace harness::case_
