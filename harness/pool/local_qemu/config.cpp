// The local-qemu provider block (see config.hpp).
#include "harness/pool/local_qemu/config.hpp"

namespace harness::pool::local_qemu {

nlohmann::json Config::settings() const {
  return {{"count", count},
          {"hosts_file", ""},
          {"vms", vms},
          {"fresh_guest_per_case", fresh_guest_per_case},
          {"accelerator", accelerator}};
}

std::string Config::vm_names_source() const { return "local-qemu names them vm0..vm" + std::to_string(count - 1); }

Checked Config::check_vm_count(std::size_t n) const {
  if (static_cast<int>(n) == count) return {};
  return problem("lists " + std::to_string(n) + " VMs but provider.count is " + std::to_string(count) +
                 " (local-qemu boots exactly the design's VMs)");
}

std::shared_ptr<Config> make_config(int count, bool fresh_guest_per_case, const std::string& accelerator) {
  auto c = std::make_shared<Config>();
  c->kind = "local-qemu";
  c->count = count;
  c->fresh_guest_per_case = fresh_guest_per_case;
  c->accelerator = accelerator;
  for (int i = 0; i < count; ++i) c->vms.push_back("vm" + std::to_string(i));
  return c;
}

std::shared_ptr<EngineConfig> parse(yaml::Section& s, const ParseContext&) {
  const int count = static_cast<int>(yaml::positive_int(s, "count"));
  const bool fresh = s.scalar<bool>("fresh_guest_per_case", true);
  const std::string accel = s.scalar<std::string>("accelerator", std::string("auto"));
  if (accel != "auto" && accel != "kvm" && accel != "tcg")
    s.fail(s.at("accelerator"), s.field("accelerator"), "'" + accel + "' is not one of auto, kvm, tcg");
  return make_config(count, fresh, accel);
}

}  // namespace harness::pool::local_qemu
