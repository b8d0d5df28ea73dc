// Engine local-qemu: 1-vCPU / 1-GiB qemu guests this machine boots itself (harness/vm/:
// `harness vm image|up|reboot|down`), KVM when a trial boot shows it works, else TCG
// (harness/vm/accel.hpp). The default engine: smoke, CI and README command 1.
//
// The campaign's VMs keep their names (vm0..vm{count-1}: design.vms, cases.vm, the plan); each
// runs as a local guest ("slot", <cache>/vms/vmK/) that acquire claims for the campaign and DB
// (harness/pool/local_guest/slots.hpp): the one that served it before, else the one of its own
// name when free, else the lowest free one, so that campaigns sharing the cache run side by
// side (ours, issue 59). capacity counts the guests of every other campaign running from the
// cache against this machine's cores.
//
// acquire: a running guest whose owner.json names this campaign, DB and VM was booted by an
// earlier runner of the same command (killed: the DB lock says it is gone) and is adopted when
// its agent answers within AcquireContext::adopt_wait_s, else booted again (same port and
// token, fresh disk); the missing guests are booted (one `vm up` per contiguous block of
// slots), with owner.json written before the boot so that a runner killed during it leaves
// guests its successor recognises. The guests of the campaign are also listed in <DB
// dir>/<campaign>.hosts.yaml (HOSTS.md format, under the campaign's VM names, `local_guest:`
// naming a slot of another name) for `harness run --hosts` by hand.
#include "harness/pool/agent_wait.hpp"

#include "harness/pool/engine.hpp"
#include "harness/pool/local_qemu/config.hpp"
#include "harness/pool/local_guest/guest_ops.hpp"
#include "harness/pool/local_guest/local_host.hpp"
#include "harness/pool/local_guest/owner.hpp"
#include "harness/pool/local_guest/slots.hpp"
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

/// One local guest of the campaign: its operations act on its slot's qemu through
/// harness/vm/fleet.hpp; its Guest::name is the campaign's VM name.
class LocalGuest : public Instance {
 public:
  /// `released` is shared with the pool, whose release() skips a guest released here.
  LocalGuest(Guest g, std::string slot, bool fresh, std::string campaign, std::string db, std::shared_ptr<bool> released)
      : Instance(std::move(g), fresh), slot_(std::move(slot)), campaign_(std::move(campaign)), db_(std::move(db)),
        released_(std::move(released)) {}

  BootResult fresh_boot(const BootRequest& r) override {
    return local_guest::fresh_boot(slot_, r, campaign_, db_, "local-qemu", name());
  }
  Liveness liveness() override { return local_guest::liveness(slot_); }
  std::string diagnose(std::size_t max_bytes) override { return console_tail(slot_, max_bytes); }
  void release() noexcept override {
    if (*released_) return;
    *released_ = true;
    stop_guest(slot_);
  }

  /// Stops local guest `slot` (no error when it was never booted) and clears its owner record.
  static void stop_guest(const std::string& slot) noexcept {
    try {
      harness::vm::fleet_down("", {slot});
    } catch (const std::exception&) {
      // this guest has no state: never booted, nothing to stop
    }
    try {
      clear_guest_owner(slot);
    } catch (const std::exception&) {
      // no owner record to clear: nothing of this run is left
    }
  }

 private:
  std::string slot_, campaign_, db_;
  std::shared_ptr<bool> released_;
};

class LocalQemuPool : public Pool {
 public:
  LocalQemuPool(std::shared_ptr<const Config> cfg, OpenContext ctx) : cfg_(std::move(cfg)), ctx_(std::move(ctx)) {}

  std::string kind() const override { return "local-qemu"; }

  std::vector<HostCapacity> capacity() override {
    return {local_capacity(cfg_->vms, "", local_guest::CampaignOwner{ctx_.campaign, ctx_.db_path})};
  }

  std::vector<std::unique_ptr<Instance>> acquire(const AcquireContext& ctx) override {
    campaign_ = ctx.campaign;
    db_ = owner_db_path(ctx.db_path);
    acquired_ = true;
    request_flag_ = ctx.accelerator;
    slots_ = local_guest::claim_slots(ctx.campaign, ctx.db_path, cfg_->vms);
    std::vector<int> missing;  // indexes into slots_ of guests to boot
    std::vector<std::string> running;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      const auto& s = slots_[i];
      if (s.guest != s.vm)
        std::fprintf(ctx.out, "%s: runs as local guest %s (local guest %s serves another campaign or is booting)\n",
                     s.vm.c_str(), s.guest.c_str(), s.vm.c_str());
      const auto g = guest_info(s.guest);
      if (!g || !g->running) missing.push_back(static_cast<int>(i));
      else if (adopt_or_reboot(ctx, s, *g)) running.push_back(s.vm);
    }
    if (!missing.empty()) boot_missing(ctx, missing);
    else accel_reason_ = "as booted by the earlier runner (" + harness::text::join(running) + ")";
    return instances(ctx);
  }

  void release() noexcept override {
    if (!acquired_) return;
    acquired_ = false;
    // Only the guests of this campaign (others may share the cache), and only those no
    // Instance released already.
    for (const auto& s : slots_) {
      const auto it = released_.find(s.vm);
      if (it != released_.end() && *it->second) continue;
      LocalGuest::stop_guest(s.guest);
    }
    released_.clear();
  }

  void release_orphans(const AcquireContext& ctx) noexcept override {
    std::vector<local_guest::Slot> left;
    try {
      left = local_guest::slots_of(ctx.campaign, ctx.db_path);
    } catch (const std::exception& e) {
      std::fprintf(ctx.out, "local guests of campaign %s: cannot list them: %s\n", ctx.campaign.c_str(), e.what());
    }
    for (const auto& s : left) {
      try {
        const auto g = guest_info(s.guest);
        if (!g || !g->running) continue;
        std::fprintf(ctx.out,
                     "%s: stopping the guest (local guest %s) an earlier runner of campaign %s left running (nothing "
                     "left to run)\n",
                     s.vm.c_str(), s.guest.c_str(), ctx.campaign.c_str());
        harness::vm::fleet_down("", {s.guest});
        clear_guest_owner(s.guest);
      } catch (const std::exception& e) {
        std::fprintf(ctx.out, "%s: could not stop it: %s\n", s.guest.c_str(), e.what());
      }
    }
  }

  std::string describe() const override {
    std::vector<std::string> names;
    for (const auto& vm : cfg_->vms) names.push_back(vm);
    for (const auto& s : slots_)
      if (s.guest != s.vm) std::replace(names.begin(), names.end(), s.vm, s.vm + " as local guest " + s.guest);
    std::string s = "engine local-qemu: " + std::to_string(cfg_->vms.size()) + " guest(s) (" + harness::text::join(names) +
                    ") on this machine (" + local_host_name() + "), ";
    if (accelerators_.empty())
      return s + "accelerator request " + request() + " (decided when the guests boot: a trial boot under KVM, else TCG)";
    std::vector<std::string> a(accelerators_.begin(), accelerators_.end());
    return s + "accelerator " + harness::text::join(a) + (accel_reason_.empty() ? "" : " (" + accel_reason_ + ")");
  }

 private:
  /// A running slot of this campaign, DB and VM (claim_slots' rule 1): an earlier runner of the
  /// same command booted it and is gone (the DB lock). Adopted when its agent answers within
  /// ctx.adopt_wait_s (true), else booted again (false). Throws BootError naming the guest.
  bool adopt_or_reboot(const AcquireContext& ctx, const local_guest::Slot& s, const harness::vm::GuestInfo& g) {
    const auto owner = read_guest_owner(g.state_dir);
    const int runner = owner ? owner->runner_pid : -1;
    Guest probe;
    probe.name = s.vm;
    probe.url = g.url;
    probe.token_file = g.token_file;
    HostWait w;
    w.total_s = ctx.adopt_wait_s;
    const auto still = wait_for_agents({probe}, w, ctx.out);
    if (still.empty()) {
      std::fprintf(ctx.out,
                   "%s: adopting the running guest (local guest %s, qemu pid %d, %s) that an earlier runner (pid %d) of "
                   "campaign %s booted\n",
                   s.vm.c_str(), s.guest.c_str(), g.pid, g.url.c_str(), runner, ctx.campaign.c_str());
      return true;
    }
    std::fprintf(ctx.out, "%s: guest booted by an earlier runner (pid %d) does not answer (%s): rebooting it\n",
                 s.vm.c_str(), runner, still.front().c_str());
    std::fflush(ctx.out);
    local_guest::fresh_boot(s.guest, BootRequest{}, ctx.campaign, ctx.db_path, "local-qemu", s.vm);  // BootError names it
    return false;
  }

  /// One Instance per campaign VM, in order, once every slot runs; the hosts file of the campaign.
  std::vector<std::unique_ptr<Instance>> instances(const AcquireContext& ctx) {
    std::vector<harness::vm::GuestInfo> mine;
    std::vector<std::unique_ptr<Instance>> out;
    for (const auto& s : slots_) {
      write_guest_owner(s.guest, ctx.campaign, ctx.db_path, s.vm);
      auto g = guest_info(s.guest);
      if (!g || !g->running) throw BootError(s.vm, "local guest " + s.guest + " not running after the boot", console_tail(s.guest, 4096));
      g->serves = s.vm;
      mine.push_back(*g);
      Guest x;
      x.name = s.vm;
      x.host = local_host_name();
      x.url = g->url;
      x.token_file = g->token_file;
      x.accelerator = g->accelerator;
      released_[s.vm] = std::make_shared<bool>(false);
      out.push_back(std::make_unique<LocalGuest>(x, s.guest, cfg_->fresh_guest_per_case, campaign_, db_, released_[s.vm]));
      accelerators_.insert(g->accelerator);
    }
    try {
      harness::vm::write_hosts_file(hosts_file_for(ctx.campaign, ctx.db_path), mine, cfg_->fresh_guest_per_case);
    } catch (const std::exception& e) {
      std::fprintf(ctx.out, "note: %s\n", e.what());  // a convenience listing only
    }
    return out;
  }

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

  /// The accelerator for the guests to boot: decided once (the probe result is cached).
  harness::vm::AccelChoice choose(const AcquireContext& ctx) {
    try {
      harness::vm::AccelRequest req;
      req.requested = harness::vm::effective_accel_request(ctx.accelerator, cfg_->accelerator);
      req.vmlinuz = harness::vm::load_image("").vmlinuz;
      req.cache_dir = harness::vm::cache_root("");
      return harness::vm::choose_accelerator(req);
    } catch (const std::exception& e) {
      throw PoolError(std::string("local-qemu: accelerator: ") + e.what());
    }
  }

  void boot_missing(const AcquireContext& ctx, const std::vector<int>& missing) {
    for (int i : missing) write_guest_owner(slots_[i].guest, ctx.campaign, ctx.db_path, slots_[i].vm);  // kill -9 during the boot
    const harness::vm::AccelChoice choice = choose(ctx);
    accel_reason_ = choice.reason;
    if (choice.trial_s >= 0) record_kvm_trial("local-qemu", local_host_name(), choice.trial_s);  // host_costs.hpp
    // One `vm up` per block of slots vmK..vmK+n-1 (a campaign alone: one block from vm0).
    std::vector<int> ks;
    for (int i : missing) ks.push_back(std::stoi(slots_[i].guest.substr(2)));
    std::sort(ks.begin(), ks.end());
    std::vector<std::pair<int, int>> runs;  // (first slot index, count)
    for (int k : ks) {
      if (!runs.empty() && runs.back().first + runs.back().second == k) ++runs.back().second;
      else runs.emplace_back(k, 1);
    }
    for (const auto& [first, count] : runs) {
      harness::vm::FleetOptions o;
      o.count = count;
      o.first_index = first;
      o.vcpus = ctx_.vcpus;
      o.memory_mib = ctx_.memory_mib;
      o.fresh_per_case = cfg_->fresh_guest_per_case;
      o.hosts_file = hosts_file_for(ctx.campaign, ctx.db_path);
      o.accelerator = choice.accelerator;
      try {
        harness::vm::fleet_up(o);
      } catch (const std::exception& e) {
        const std::string slot = "vm" + std::to_string(first);
        throw BootError(slot,
                        "local guests: `harness vm up --count " + std::to_string(count) + " --first-index " +
                            std::to_string(first) + "` failed: " + e.what(),
                        console_tail(slot, 4096));
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
  std::vector<local_guest::Slot> slots_;  ///< per campaign VM, in order: the local guest serving it (acquire)
  std::map<std::string, std::shared_ptr<bool>> released_;  ///< per VM acquire() returned: its Instance released it
};

std::unique_ptr<Pool> open(std::shared_ptr<const EngineConfig> config, const OpenContext& ctx) {
  auto cfg = std::dynamic_pointer_cast<const Config>(config);
  if (!cfg) throw PoolError("local-qemu: the provider block was not parsed by this engine");
  return std::make_unique<LocalQemuPool>(std::move(cfg), ctx);
}

std::vector<std::string> down(std::shared_ptr<const EngineConfig>, const DownContext& ctx) {
  std::vector<std::string> stopped;
  for (const auto& s : local_guest::slots_of(ctx.campaign, ctx.db_path)) {
    const auto g = guest_info(s.guest);
    if (!g || !g->running) continue;
    const auto o = read_guest_owner(g->state_dir);
    harness::vm::fleet_down("", {s.guest});
    clear_guest_owner(s.guest);
    std::fprintf(ctx.out, "%s: stopped (local guest %s, qemu pid %d, campaign %s, DB %s)\n", s.vm.c_str(), s.guest.c_str(),
                 g->pid, ctx.campaign.c_str(), o ? o->db.c_str() : "?");
    stopped.push_back(s.vm + " (local guest " + s.guest + ") on " + local_host_name());
  }
  return stopped;
}

[[maybe_unused]] const bool kRegistered = register_engine(
    {"local-qemu", "qemu guests this machine boots itself (harness vm up), KVM when a trial boot works, else TCG",
     Capabilities{.fresh_boot_per_case = true,
                  .boot_variants = true,
                  .guests_on_this_machine = true,
                  .kernel_known_before_boot = true},
     parse, open, down});

}  // namespace
}  // namespace harness::pool::local_qemu
