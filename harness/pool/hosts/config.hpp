#pragma once
// The `provider:` block of engine hosts (docs/CAMPAIGN.md "provider"):
//   provider: {kind: hosts, vms: [vm0, vm1], hosts_file: hosts.yaml, fresh_guest_per_case: false}
// `harness run --hosts FILE` uses this engine with FILE whatever the campaign's kind.
#include "harness/pool/engine.hpp"

#include <memory>
#include <string>

namespace harness::pool::hosts {

class Config : public EngineConfig {
 public:
  std::string hosts_file;  ///< provider.hosts_file ("" = give --hosts); as written (relative: to the working directory)
  /// {count, hosts_file, vms, fresh_guest_per_case, accelerator: "auto"} (the keys A/B
  /// comparison settings have always had).
  nlohmann::json settings() const override;
  std::shared_ptr<EngineConfig> clone() const override { return std::make_shared<Config>(*this); }
};

/// Reads vms (required), hosts_file (optional) and fresh_guest_per_case (default false).
std::shared_ptr<EngineConfig> parse(yaml::Section& s, const ParseContext& ctx);

}  // namespace harness::pool::hosts
