#pragma once
// What can be done to one local guest (harness/vm/fleet.hpp) on behalf of a campaign:
// a fresh boot for a case, is it running, its console tail. Used by the local-qemu engine
// and by the hosts engine for hosts-file entries with `local: true`.
#include "harness/pool/pool.hpp"

#include <cstddef>
#include <string>

namespace harness::pool::local_guest {

/// Fresh local guest `name` for a case (harness/vm/fleet.hpp fleet_reboot: qemu stopped, new
/// copy of the data disk, same port and token, booted with r.image_dir and r.cmdline, health
/// waited for up to ready_timeout_s), then owner.json names `campaign` / `db` and the campaign
/// VM `serves` ("" = `name`; slots.hpp) with the new qemu pid; the boot's start-to-ready time is recorded for this machine under `engine_kind`
/// (the engine that asked: harness/pool/host_costs.hpp). Throws BootError with the console tail (and, when r.log_dir is set, the whole
/// console log copied to r.log_dir/console.log).
BootResult fresh_boot(const std::string& name, const BootRequest& r, const std::string& campaign,
                      const std::string& db, const std::string& engine_kind, const std::string& serves = "",
                      int ready_timeout_s = 300);

/// Running when the guest's qemu process is alive, Gone when its state dir says it is not,
/// Unknown for a name without state. Never throws.
Liveness liveness(const std::string& name);

/// The last `max_bytes` of the guest's serial console log ("" when there is none). Never throws.
std::string console_tail(const std::string& name, std::size_t max_bytes);

}  // namespace harness::pool::local_guest
