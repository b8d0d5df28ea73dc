#pragma once
// The `provider:` block of engine local-qemu (docs/CAMPAIGN.md "provider"):
//   provider: {kind: local-qemu, count: N, fresh_guest_per_case: true, accelerator: auto}
// Guests are named vm0..vm{count-1}.
#include "harness/pool/engine.hpp"

#include <memory>
#include <string>

namespace harness::pool::local_qemu {

class Config : public EngineConfig {
 public:
  int count = 1;                     ///< provider.count (> 0): guests vm0..vm{count-1}
  std::string accelerator = "auto";  ///< provider.accelerator: auto | kvm | tcg (harness/vm/accel.hpp)
  /// {count, hosts_file: "", vms, fresh_guest_per_case, accelerator} (the keys A/B
  /// comparison settings have always had).
  nlohmann::json settings() const override;
  std::string vm_names_source() const override;
  Checked check_vm_count(std::size_t n) const override;
  std::shared_ptr<EngineConfig> clone() const override { return std::make_shared<Config>(*this); }
};

/// Reads count, fresh_guest_per_case (default true) and accelerator (default auto).
std::shared_ptr<EngineConfig> parse(yaml::Section& s, const ParseContext& ctx);

/// A filled-in config, as parse would give for `count` guests (tests, `harness vm up`).
std::shared_ptr<Config> make_config(int count, bool fresh_guest_per_case = true, const std::string& accelerator = "auto");

}  // namespace harness::pool::local_qemu
