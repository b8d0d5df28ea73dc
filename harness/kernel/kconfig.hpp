#pragma once
// Kernel build configuration (CONFIG_* lines), recorded by qualification.
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "harness/kernel/fs.hpp"

namespace harness::kernel {

/// Parsed kernel .config: CONFIG_X=y|m|"str"|123 kept as text (quotes kept);
/// "# CONFIG_X is not set" stored as "n".
struct KernelConfig {
  std::string source;  ///< file it came from, e.g. "/boot/config-6.1.0-57-cloud-amd64"
  std::map<std::string, std::string> options;
  /// Value of `name` ("CONFIG_PSI"), or nullopt when the config does not mention it.
  std::optional<std::string> get(std::string_view name) const;
  /// True for "y" or "m".
  bool enabled(std::string_view name) const;
};
KernelConfig parse_kernel_config(std::string_view text, const std::string& file);

/// Finds and reads the running kernel's config: boot/config-<release>, then
/// proc/config.gz (gzip, read with zlib), then lib/modules/<release>/config.
/// nullopt when none exists. Throws ParseError on a malformed file.
std::optional<KernelConfig> read_kernel_config(const Fs& fs, const std::string& release);

}  // namespace harness::kernel
