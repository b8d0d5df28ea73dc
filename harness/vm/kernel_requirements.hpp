#pragma once
// What a guest kernel must have for the harness (ours, from what the guest image and the
// case executor use; docs/CI.md "The kernel configuration a candidate kernel needs"):
// checked by `harness vm image` against the kernel's build configuration before anything
// is built, so a candidate kernel without PSI, memcg, zram or virtio is refused with the
// missing options named instead of booting a guest that cannot run a case.
#include "harness/kernel/kconfig.hpp"

#include <optional>
#include <string>
#include <vector>

namespace harness::vm {

/// One option the guest kernel needs.
struct KernelRequirement {
  std::string option;                ///< e.g. "CONFIG_PSI"
  bool module_ok = false;            ///< "m" is enough (the image loads the modules below)
  std::vector<std::string> modules;  ///< canonical module names the option builds (wanted_modules())
  std::string why;                   ///< what needs it, in a few words
};

/// Every required option, in the order the error lists them. Also required: release >= 5.19
/// (cgroup v2 memory.reclaim) and CONFIG_PSI_DEFAULT_DISABLED not "y" (PSI would be off
/// without psi=1 on the command line, which the image does not set).
const std::vector<KernelRequirement>& guest_kernel_requirements();

/// The result of checking one configuration.
struct KernelConfigCheck {
  std::string config_path;            ///< the file checked
  std::vector<std::string> problems;  ///< one line per unmet requirement (option, value found, need, why)
  /// Modules of the wanted set that the configuration builds in (=y): module_load_order must
  /// skip them even when the modules tree has no modules.builtin.
  std::vector<std::string> builtin_modules;
  bool ok() const { return problems.empty(); }
};

/// Checks `cfg` (parse_kernel_config) and `release` (uname -r form, "6.1.0-57-cloud-amd64").
KernelConfigCheck check_kernel_config(const harness::kernel::KernelConfig& cfg, const std::string& release);

/// The configuration file of a kernel: `explicit_config` when given (must exist), else the
/// first that exists of: <dir of vmlinuz>/.config, <dir of vmlinuz>/config-<release>, the
/// kernel tree's .config when vmlinuz is <tree>/arch/<arch>/boot/bzImage,
/// <modules_dir>/build/.config (the link `make modules_install` leaves), <modules_dir>/config,
/// /boot/config-<release>. nullopt when none exists; `looked` (when not null) receives every
/// path tried, for the message. Throws std::runtime_error when `explicit_config` is
/// given and missing.
std::optional<std::string> find_kernel_config(const std::string& vmlinuz, const std::string& modules_dir,
                                              const std::string& release, const std::string& explicit_config,
                                              std::vector<std::string>* looked = nullptr);

/// find_kernel_config + check_kernel_config. Throws std::runtime_error with one readable
/// message: no configuration found (every path tried, and --kernel-config), or the unmet
/// requirements, one per line, each with the option, what was found and what is needed.
/// `what` names the kernel in the message (e.g. "--kernel build/arch/x86/boot/bzImage").
KernelConfigCheck require_guest_kernel(const std::string& vmlinuz, const std::string& modules_dir,
                                       const std::string& release, const std::string& explicit_config,
                                       const std::string& what);

}  // namespace harness::vm
