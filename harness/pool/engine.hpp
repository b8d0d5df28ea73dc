#pragma once
// The engine registry: one Engine per `provider.kind`, registered by the engine's own file
// at static initialisation, e.g. in harness/pool/local_qemu/local_qemu.cpp:
//
//   const bool kRegistered = harness::pool::register_engine({
//       "local-qemu", "qemu guests this machine boots", capabilities, parse, open});
//
// Engine libraries are linked whole (harness/pool/CMakeLists.txt harness_pool_engine), so
// the linker never drops such a registration. The campaign loader parses `provider.kind`
// and `provider.overcommit` itself, then hands the rest of the block to the engine's parse;
// the campaign keeps the engine's EngineConfig opaquely (Campaign::engine) and the runner
// opens a Pool from it (open_pool).
#include "harness/error/expected.hpp"
#include "harness/pool/pool.hpp"
#include "harness/yaml/strict_yaml.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace harness::pool {

/// An engine's parsed `provider:` block. Engines derive their own config from it.
class EngineConfig {
 public:
  virtual ~EngineConfig() = default;
  std::string kind;                  ///< provider.kind (set by the loader)
  bool overcommit = false;           ///< provider.overcommit (every engine; set by the loader)
  std::vector<std::string> vms;      ///< the campaign's guests, in order (the strata's VM names)
  bool fresh_guest_per_case = false; ///< provider.fresh_guest_per_case (engine's default)
  /// The block as parsed, with defaults, WITHOUT `kind` and `overcommit`: the provider part
  /// of an A/B campaign's comparison settings (harness/campaign/model/ab_settings.hpp).
  virtual nlohmann::json settings() const = 0;
  /// How the engine names its VMs, for design.vms messages ("local-qemu names them vm0..vm8").
  virtual std::string vm_names_source() const { return "provider.vms"; }
  /// design.vms lists `n` VMs: passed when the engine has no rule on the number beyond "every
  /// VM of the provider", else the Problem saying what n should be (local-qemu: provider.count).
  virtual Checked check_vm_count(std::size_t n) const {
    (void)n;
    return {};
  }
  /// A copy (campaigns are copied and changed in tests and by `harness check`).
  virtual std::shared_ptr<EngineConfig> clone() const = 0;
};

/// What an engine's parse sees of the campaign besides its block.
struct ParseContext {
  std::string campaign_file;  ///< for errors and paths relative to the campaign's folder
  int vcpus = 1;              ///< vm.vcpus
  int memory_mib = 1024;      ///< vm.memory_mib
};

/// What open_pool passes to an engine's open.
struct OpenContext {
  std::string campaign_file;  ///< for errors
  int vcpus = 1;              ///< guest shape (vm block)
  int memory_mib = 1024;
  /// `--hosts FILE`: the hosts engine with this file instead of the campaign's block (its
  /// VMs and fresh_guest_per_case taken from the campaign's config).
  std::string hosts_file;
  /// The campaign's name and DB ("" at a preview: `harness plan FILE`): an engine whose guests
  /// carry owner records counts its own running guests by them and every other as another's
  /// (local-qemu: harness/pool/local_guest/slots.hpp).
  std::string campaign;
  std::string db_path;
};

/// What `harness vm down --campaign FILE` passes to an engine's down.
struct DownContext {
  std::string campaign;     ///< campaign name (owner records)
  std::string db_path;      ///< "" = every DB of that campaign; else only guests serving this DB
  bool images = false;      ///< also delete the campaign's stored images on its hosts (libvirt: the image
                            ///< volumes no other campaign claims)
  bool purge = false;       ///< then remove everything the engine stores on its hosts and in the cache, for
                            ///< every campaign (libvirt: its storage pool and the slotted disks); engines
                            ///< that store nothing ignore it
  std::string cache_dir;    ///< cache root ("" = harness/vm/paths.hpp cache_root's default)
  std::FILE* out = stderr;  ///< one line per guest stopped
};

/// One engine.
struct Engine {
  std::string kind;       ///< provider.kind, [a-z0-9-]+
  std::string summary;    ///< one line: where its guests come from
  Capabilities capabilities;  ///< the most it can do (parse-time checks: boot_variants)
  /// Reads the block's engine keys (the loader already consumed `kind` and `overcommit`
  /// and calls finish() afterwards). Errors: s.fail(...) (FILE:LINE:COL). Must fill
  /// EngineConfig::vms and fresh_guest_per_case.
  std::function<std::shared_ptr<EngineConfig>(yaml::Section& provider, const ParseContext& ctx)> parse;
  /// A pool for `config` (which this engine's parse made, except for the hosts engine with
  /// OpenContext::hosts_file). Must not boot anything. Throws PoolError.
  std::function<std::unique_ptr<Pool>(std::shared_ptr<const EngineConfig> config, const OpenContext& ctx)> open;
  /// Optional (`harness vm down --campaign FILE`): stop the guests the harness booted for
  /// ctx.campaign (and ctx.db_path) on the hosts of `config`, whatever runner booted them;
  /// guests of other campaigns and guests without an owner record are never touched. Returns
  /// one "GUEST on HOST" per guest stopped. Empty for an engine that boots nothing (hosts).
  /// Throws PoolError when a host cannot be reached.
  std::function<std::vector<std::string>(std::shared_ptr<const EngineConfig> config, const DownContext& ctx)> down;
};

/// Registers `e`. Returns true (for static initialisation). Throws std::logic_error for an
/// empty or duplicate kind or a missing parse/open.
bool register_engine(Engine e);

/// The engine of `kind`, nullptr when none is registered.
const Engine* find_engine(const std::string& kind);

/// Every registered kind, sorted.
std::vector<std::string> engine_kinds();

/// Kinds whose capabilities say `pred`, sorted, joined with " or " ("libvirt or local-qemu").
std::string engine_kinds_where(const std::function<bool(const Capabilities&)>& pred);

/// The engine that gave a case its guest, told from where the case ran (cases.host_uri, a
/// Guest::host), for a case recorded before cases.engine_kind (results schema version 7):
/// "local:HOSTNAME" is local-qemu's, a URI (with "://") libvirt's, any other name a hosts
/// file's `hypervisor:` (hosts). `host` is not empty.
std::string engine_kind_of_host(const std::string& host);

/// The pool of a campaign: the engine of config->kind, or the `hosts` engine when
/// ctx.hosts_file is set. Throws PoolError when that engine is not registered.
std::unique_ptr<Pool> open_pool(std::shared_ptr<const EngineConfig> config, const OpenContext& ctx);

}  // namespace harness::pool
