// Engine local-qemu: 1-vCPU / 1-GiB qemu guests this machine boots itself (harness/vm/:
// `harness vm image|up|reboot|down`), named vm0..vm{count-1}, KVM when a trial boot shows it
// works, else TCG (harness/vm/accel.hpp). The default engine: smoke, CI and README command 1.
//
// acquire: a running guest whose owner.json (owner.hpp) names this campaign and DB was
// booted by an earlier runner of the same command (killed: the DB lock says it is gone) and
// is adopted when its agent answers within AcquireContext::adopt_wait_s, else booted again
// (same port and token, fresh disk); a running guest owned by anything else is refused,
// naming its owner; the missing guests are booted (one `vm up` per contiguous block), with
// owner.json written before the boot so that a runner killed during it leaves guests its
// successor recognises. The guests of the campaign are also listed in <DB dir>/<campaign>.hosts.yaml
// (HOSTS.md format) for `harness run --hosts` by hand.
#include "harness/pool/agent_wait.hpp"

#include "harness/pool/engine.hpp"
#include "harness/pool/local_qemu/config.hpp"
#include "harness/pool/local_guest/guest_ops.hpp"
#include "harness/pool/local_guest/local_host.hpp"
#include "harness/pool/local_guest/owner.hpp"
#include "harness/pool/host_costs.hpp"
#include "harness/text/join.hpp"
#include "harness/vm/accel.hpp"
#include "harness/vm/fleet.hpp"
#include "harness/vm/image.hpp"
#include "harness/vm/paths.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>

namespace fs = std::filesystem;

namespace harness::pool::local_qemu {
namespace {

// One local guest's operations, shared with the hosts engine (harness/pool/local_guest/).
using local_guest::clear_guest_owner;
using local_guest::console_tail;
using local_guest::local_capacity;
using local_guest::local_host_name;
using local_guest::owned_by;
using local_guest::owner_db_path;
using local_guest::read_guest_owner;
using local_guest::write_guest_owner;

std::optional<harness::vm::GuestInfo> guest_info(const std::string& vm) {
  for (const auto& g : harness::vm::fleet_list(""))
    if (g.name == vm) return g;
  return std::nullopt;
}

/// One local guest of the campaign: its operations act on its qemu through harness/vm/fleet.hpp.
class LocalGuest : public Instance {
 public:
  /// `released` is shared with the pool, whose release() skips a guest released here.
  LocalGuest(Guest g, bool fresh, std::string campaign, std::string db, std::shared_ptr<bool> released)
      : Instance(std::move(g), fresh), campaign_(std::move(campaign)), db_(std::move(db)), released_(std::move(released)) {}

  BootResult fresh_boot(const BootRequest& r) override {
    return local_guest::fresh_boot(name(), r, campaign_, db_, "local-qemu");
  }
  Liveness liveness() override { return local_guest::liveness(name()); }
  std::string diagnose(std::size_t max_bytes) override { return console_tail(name(), max_bytes); }
  void release() noexcept override {
    if (*released_) return;
    *released_ = true;
    stop_guest(name());
  }

  /// Stops guest `vm` (no error when it was never booted) and clears its owner record.
  static void stop_guest(const std::string& vm) noexcept {
    try {
      harness::vm::fleet_down("", {vm});
    } catch (const std::exception&) {
      // this guest has no state: never booted, nothing to stop
    }
    try {
      clear_guest_owner(vm);
    } catch (const std::exception&) {
      // no owner record to clear: nothing of this run is left
    }
  }

 private:
  std::string campaign_, db_;
  std::shared_ptr<bool> released_;
};

class LocalQemuPool : public Pool {
 public:
  LocalQemuPool(std::shared_ptr<const Config> cfg, OpenContext ctx) : cfg_(std::move(cfg)), ctx_(std::move(ctx)) {}

  std::string kind() const override { return "local-qemu"; }

  std::vector<HostCapacity> capacity() override { return {local_capacity(cfg_->vms)}; }

  std::vector<std::unique_ptr<Instance>> acquire(const AcquireContext& ctx) override {
    campaign_ = ctx.campaign;
    db_ = owner_db_path(ctx.db_path);
    acquired_ = true;
    request_flag_ = ctx.accelerator;
    std::vector<int> missing;  // indexes into vms of guests to boot
    std::vector<std::string> adopted, rebooted;
    for (std::size_t i = 0; i < cfg_->vms.size(); ++i) {
      const std::string& vm = cfg_->vms[i];
      if (vm != "vm" + std::to_string(i))
        throw PoolError(ctx_.campaign_file + ": local guests are named vm0..vmN in order; got '" + vm + "'");
      const auto g = guest_info(vm);
      if (!g || !g->running) {
        missing.push_back(static_cast<int>(i));
        continue;
      }
      const auto owner = read_guest_owner(g->state_dir);
      if (!owned_by(owner, ctx.campaign, ctx.db_path))
        throw PoolError(
            vm + " is already running (qemu pid " + std::to_string(g->pid) + ") and was not booted for campaign " +
            ctx.campaign + " into " + db_ +
            (owner ? " (it serves campaign " + owner->campaign + ", DB " + owner->db + ")" : " (booted by hand?)") +
            ": stop it with `harness vm down " + vm + "`, or run that campaign's command again");
      // Booted by an earlier runner of this campaign and DB; that runner is gone (DB lock).
      Guest probe;
      probe.name = vm;
      probe.url = g->url;
      probe.token_file = g->token_file;
      HostWait w;
      w.total_s = ctx.adopt_wait_s;
      const auto still = wait_for_agents({probe}, w, ctx.out);
      if (still.empty()) {
        std::fprintf(ctx.out,
                     "%s: adopting the running guest (qemu pid %d, %s) that an earlier runner (pid %d) of campaign "
                     "%s booted\n",
                     vm.c_str(), g->pid, g->url.c_str(), owner->runner_pid, ctx.campaign.c_str());
        adopted.push_back(vm);
      } else {
        std::fprintf(ctx.out, "%s: guest booted by an earlier runner (pid %d) does not answer (%s): rebooting it\n",
                     vm.c_str(), owner->runner_pid, still.front().c_str());
        std::fflush(ctx.out);
        local_guest::fresh_boot(vm, BootRequest{}, ctx.campaign, ctx.db_path, "local-qemu");  // BootError names the guest
        rebooted.push_back(vm);
      }
    }
    if (!missing.empty()) boot_missing(ctx, missing);
    else accel_reason_ = "as booted by the earlier runner (" + harness::text::join(adopted.empty() ? rebooted : adopted) + ")";
    std::vector<harness::vm::GuestInfo> mine;
    std::vector<std::unique_ptr<Instance>> out;
    for (const auto& vm : cfg_->vms) {
      write_guest_owner(vm, ctx.campaign, ctx.db_path);
      const auto g = guest_info(vm);
      if (!g || !g->running) throw BootError(vm, "not running after the boot", console_tail(vm, 4096));
      mine.push_back(*g);
      Guest x;
      x.name = vm;
      x.host = local_host_name();
      x.url = g->url;
      x.token_file = g->token_file;
      x.accelerator = g->accelerator;
      released_[vm] = std::make_shared<bool>(false);
      out.push_back(std::make_unique<LocalGuest>(x, cfg_->fresh_guest_per_case, campaign_, db_, released_[vm]));
      accelerators_.insert(g->accelerator);
    }
    try {
      harness::vm::write_hosts_file(hosts_file_for(ctx.campaign, ctx.db_path), mine, cfg_->fresh_guest_per_case);
    } catch (const std::exception& e) {
      std::fprintf(ctx.out, "note: %s\n", e.what());  // a convenience listing only
    }
    return out;
  }

  void release() noexcept override {
    if (!acquired_) return;
    acquired_ = false;
    // Only the guests of this campaign (others may share the cache), and only those no
    // Instance released already.
    for (const auto& vm : cfg_->vms) {
      const auto it = released_.find(vm);
      if (it != released_.end() && *it->second) continue;
      LocalGuest::stop_guest(vm);
    }
    released_.clear();
  }

  void release_orphans(const AcquireContext& ctx) noexcept override {
    for (const auto& vm : cfg_->vms) {
      try {
        const auto g = guest_info(vm);
        if (!g || !g->running || !owned_by(read_guest_owner(g->state_dir), ctx.campaign, ctx.db_path)) continue;
        std::fprintf(ctx.out,
                     "%s: stopping the guest an earlier runner of campaign %s left running (nothing left to run)\n",
                     vm.c_str(), ctx.campaign.c_str());
        harness::vm::fleet_down("", {vm});
        clear_guest_owner(vm);
      } catch (const std::exception& e) {
        std::fprintf(ctx.out, "%s: could not stop it: %s\n", vm.c_str(), e.what());
      }
    }
  }

  std::string describe() const override {
    std::string s = "engine local-qemu: " + std::to_string(cfg_->vms.size()) + " guest(s) (" + harness::text::join(cfg_->vms) +
                    ") on this machine (" + local_host_name() + "), ";
    if (accelerators_.empty())
      return s + "accelerator request " + request() + " (decided when the guests boot: a trial boot under KVM, else TCG)";
    std::vector<std::string> a(accelerators_.begin(), accelerators_.end());
    return s + "accelerator " + harness::text::join(a) + (accel_reason_.empty() ? "" : " (" + accel_reason_ + ")");
  }

 private:
  std::string request() const {
    try {
      return harness::vm::effective_accel_request(request_flag_, cfg_->accelerator);
    } catch (const std::exception&) {
      return cfg_->accelerator;
    }
  }

  std::string hosts_file_for(const std::string& campaign, const std::string& db_path) const {
    return (fs::absolute(db_path).parent_path() / (campaign + ".hosts.yaml")).string();
  }

  void boot_missing(const AcquireContext& ctx, const std::vector<int>& missing) {
    for (int i : missing) write_guest_owner(cfg_->vms[i], ctx.campaign, ctx.db_path);  // before the boot (kill -9 during it)
    harness::vm::AccelChoice choice;
    try {
      harness::vm::AccelRequest req;
      req.requested = harness::vm::effective_accel_request(ctx.accelerator, cfg_->accelerator);
      req.vmlinuz = harness::vm::load_image("").vmlinuz;
      req.cache_dir = harness::vm::cache_root("");
      choice = harness::vm::choose_accelerator(req);
    } catch (const std::exception& e) {
      throw PoolError(std::string("local-qemu: accelerator: ") + e.what());
    }
    accel_reason_ = choice.reason;
    if (choice.trial_s >= 0) record_kvm_trial("local-qemu", local_host_name(), choice.trial_s);  // host_costs.hpp
    // One `vm up` for a contiguous block starting at vm0 (the first run), else one per block.
    std::vector<std::pair<int, int>> runs;  // (first index, count)
    for (int i : missing) {
      if (!runs.empty() && runs.back().first + runs.back().second == i) ++runs.back().second;
      else runs.emplace_back(i, 1);
    }
    for (const auto& [first, count] : runs) {
      harness::vm::FleetOptions o;
      o.count = count;
      o.first_index = first;
      o.vcpus = ctx_.vcpus;
      o.memory_mib = ctx_.memory_mib;
      o.fresh_per_case = cfg_->fresh_guest_per_case;
      o.hosts_file = hosts_file_for(ctx.campaign, ctx.db_path);
      o.accelerator = choice.accelerator;  // decided once above (the probe result is cached)
      try {
        harness::vm::fleet_up(o);
      } catch (const std::exception& e) {
        const std::string vm = cfg_->vms[first];
        throw BootError(vm,
                        "local guests: `harness vm up --count " + std::to_string(count) + " --first-index " +
                            std::to_string(first) + "` failed: " + e.what(),
                        console_tail(vm, 4096));
      }
    }
  }

  std::shared_ptr<const Config> cfg_;
  OpenContext ctx_;
  std::string campaign_, db_;
  std::string request_flag_;
  std::string accel_reason_;
  std::set<std::string> accelerators_;
  bool acquired_ = false;
  std::map<std::string, std::shared_ptr<bool>> released_;  ///< per guest acquire() returned: its Instance released it
};

std::unique_ptr<Pool> open(std::shared_ptr<const EngineConfig> config, const OpenContext& ctx) {
  auto cfg = std::dynamic_pointer_cast<const Config>(config);
  if (!cfg) throw PoolError("local-qemu: the provider block was not parsed by this engine");
  return std::make_unique<LocalQemuPool>(std::move(cfg), ctx);
}

std::vector<std::string> down(std::shared_ptr<const EngineConfig> config, const DownContext& ctx) {
  std::vector<std::string> stopped;
  for (const auto& vm : config->vms) {
    const auto g = guest_info(vm);
    if (!g || !g->running) continue;
    const auto o = read_guest_owner(g->state_dir);
    if (!o || o->campaign != ctx.campaign || (!ctx.db_path.empty() && !owned_by(o, ctx.campaign, ctx.db_path))) continue;
    harness::vm::fleet_down("", {vm});
    clear_guest_owner(vm);
    std::fprintf(ctx.out, "%s: stopped (qemu pid %d, campaign %s, DB %s)\n", vm.c_str(), g->pid, o->campaign.c_str(),
                 o->db.c_str());
    stopped.push_back(vm + " on " + local_host_name());
  }
  return stopped;
}

[[maybe_unused]] const bool kRegistered = register_engine(
    {"local-qemu", "qemu guests this machine boots itself (harness vm up), KVM when a trial boot works, else TCG",
     Capabilities{.fresh_boot_per_case = true, .boot_variants = true}, parse, open, down});

}  // namespace
}  // namespace harness::pool::local_qemu
