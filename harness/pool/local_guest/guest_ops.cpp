// One local guest's operations (see guest_ops.hpp).
#include "harness/pool/local_guest/guest_ops.hpp"

#include "harness/pool/host_costs.hpp"
#include "harness/pool/local_guest/local_host.hpp"
#include "harness/pool/local_guest/owner.hpp"
#include "harness/vm/fleet.hpp"

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace harness::pool::local_guest {

std::string console_tail(const std::string& name, std::size_t max_bytes) {
  try {
    const std::string path = harness::vm::console_log_path("", name);
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return "";
    const std::streamoff size = in.tellg();
    const std::streamoff from = size > static_cast<std::streamoff>(max_bytes) ? size - static_cast<std::streamoff>(max_bytes) : 0;
    in.seekg(from);
    std::string s(static_cast<std::size_t>(size - from), '\0');
    in.read(s.data(), static_cast<std::streamsize>(s.size()));
    s.resize(static_cast<std::size_t>(in.gcount()));
    return s;
  } catch (const std::exception&) {
    return "";
  }
}

Liveness liveness(const std::string& name) {
  try {
    for (const auto& g : harness::vm::fleet_list(""))
      if (g.name == name) return g.running ? Liveness::Running : Liveness::Gone;
  } catch (const std::exception&) {
    // no fleet state to read: the guest is gone (returned below)
  }
  return Liveness::Unknown;
}

BootResult fresh_boot(const std::string& name, const BootRequest& r, const std::string& campaign,
                      const std::string& db, const std::string& engine_kind, const std::string& serves,
                      int ready_timeout_s) {
  harness::vm::GuestInfo g;
  try {
    g = harness::vm::fleet_reboot("", name, ready_timeout_s, harness::vm::BootOptions{r.image_dir, r.cmdline});
  } catch (const std::exception& e) {
    if (!r.log_dir.empty()) {
      std::error_code ec;
      fs::create_directories(r.log_dir, ec);
      try {
        fs::copy_file(harness::vm::console_log_path("", name), fs::path(r.log_dir) / "console.log",
                      fs::copy_options::overwrite_existing, ec);
      } catch (const std::exception&) {
        // diagnosis is best effort: a missing console log is no reason to lose the case record
      }
    }
    throw BootError(name, std::string("fresh boot (harness vm reboot) failed: ") + e.what(), console_tail(name, 4096));
  }
  BootResult b;
  try {
    write_guest_owner(name, campaign, db, serves);  // the new qemu pid: a successor adopts this boot
  } catch (const std::exception& e) {
    b.note = std::string("cannot record guest ownership: ") + e.what();  // takeover only; the case is not affected
  }
  b.boot_to_ready_s = g.boot_to_ready_s;
  b.accelerator = g.accelerator;
  record_boot(engine_kind, local_host_name(), g.accelerator, g.boot_to_ready_s);  // for `harness plan` (host_costs.hpp)
  try {
    b.console_log = harness::vm::console_log_path("", name);
  } catch (const std::exception&) {
    // no console log path (the guest never booted): the boot record says so without it
  }
  return b;
}

}  // namespace harness::pool::local_guest
