// Engine libvirt: transient libvirt domains on the hypervisor hosts of the provider block
// (config.hpp), through the libvirt C API (libvirt_pool.hpp; README.md in this folder).
// Registered here by its provider.kind; the campaign loader hands it the provider section.
#include "harness/pool/engine.hpp"
#include "harness/pool/libvirt/config.hpp"
#include "harness/pool/libvirt/libvirt_pool.hpp"
#include "harness/vm/paths.hpp"

namespace harness::pool::libvirt {
namespace {

/// The engine's own config, with the fields the campaign may have changed since parse
/// (EngineConfig::fresh_guest_per_case) taken from the base.
LibvirtConfig effective(const EngineConfig& base) {
  const auto* c = dynamic_cast<const Config*>(&base);
  if (!c) throw PoolError("libvirt: the provider block was not parsed by this engine");
  LibvirtConfig lv = c->libvirt;
  lv.fresh_guest_per_case = c->fresh_guest_per_case;
  return lv;
}

std::unique_ptr<Pool> open(std::shared_ptr<const EngineConfig> config, const OpenContext& ctx) {
  LibvirtConfig lv = effective(*config);
  if (lv.guest_names() != config->vms)
    throw PoolError(ctx.campaign_file + ": libvirt places guests vm0..vmN across provider.hosts; the campaign's VMs differ");
  GuestShape shape;
  shape.vcpus = ctx.vcpus;
  shape.memory_mib = ctx.memory_mib;
  try {
    return std::make_unique<LibvirtPool>(std::move(lv), shape);
  } catch (const std::invalid_argument& e) {
    throw PoolError(ctx.campaign_file + ": " + e.what());
  }
}

std::vector<std::string> down(std::shared_ptr<const EngineConfig> config, const DownContext& ctx) {
  const LibvirtConfig cfg = effective(*config);
  auto stopped = libvirt_down(cfg, ctx.campaign, ctx.db_path, ctx.images, ctx.out);
  if (ctx.purge) libvirt_purge(cfg, harness::vm::cache_root(ctx.cache_dir.empty() ? cfg.cache_dir : ctx.cache_dir), ctx.out);
  return stopped;
}

[[maybe_unused]] const bool kRegistered = register_engine(
    {"libvirt",
     "transient libvirt domains on the hypervisor hosts listed (qemu:///system, qemu+ssh://USER@HOST/system), kvm "
     "when a host offers it and a trial boot works, else tcg",
     Capabilities{.fresh_boot_per_case = true, .boot_variants = true}, parse, open, down});

}  // namespace
}  // namespace harness::pool::libvirt
