#pragma once
// The environment record of a case (cases.environment_json): uname, /proc/cmdline, THP
// mode, swappiness, clocksource, MGLRU state, zswap state (/sys/module/zswap/parameters/
// enabled: Y | N, or "absent" when zswap is not in the kernel), page size, online CPUs, MemTotal, the
// accelerator and data_disk_cache (qemu cache mode of the data disk: `none` for local
// guests, from harness.data_disk_cache= on /proc/cmdline; `unknown` elsewhere). Read through hk_kernel; an unreadable item is recorded as
// {"error": "..."} instead of a value (never guessed).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/kernel/fs.hpp"

namespace harness::case_ {

/// Collects the record. `accelerator` as decided by accelerator_from().
nlohmann::json collect_environment(const harness::kernel::Fs& fs, const std::string& accelerator);

/// The accelerator that ran this guest: `flag` when not empty, else the value of
/// `harness.accelerator=` on /proc/cmdline (set by `harness vm` guests), else detected from
/// inside the guest (accelerator_detect.hpp: kvm | tcg | real | a hypervisor's name). The
/// campaign runner overrides cases.accelerator with the hosts file's `accelerator:` when
/// that is given.
std::string accelerator_from(const harness::kernel::Fs& fs, const std::string& flag);

/// The value of `key=` on /proc/cmdline, or `absent`.
std::string cmdline_value(const harness::kernel::Fs& fs, const std::string& key, const std::string& absent);

/// sysconf(_SC_PAGESIZE), bytes.
std::int64_t page_size_bytes();

}  // namespace harness::case_
