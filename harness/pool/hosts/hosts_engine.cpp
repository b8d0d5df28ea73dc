// Engine hosts: agents on VMs someone else created (cloud VMs from the .deb and cloud-init,
// a lab's VMs, or local guests booted by hand with `harness vm up`), listed in a hosts file
// (harness/vm/HOSTS.md). It boots nothing, except that an entry with `local: true` is a
// local guest and gets a fresh boot per case (`harness vm reboot`) when the campaign asks
// provider.fresh_guest_per_case. A VM whose entry says reboot_between_cases is rebooted
// through its agent by the runner (Guest::reboot_between_cases). Capacity is not judged: the
// engine cannot see the hypervisors (an entry's `hypervisor:` only names them).
#include "harness/pool/engine.hpp"

#include "harness/pool/hosts/config.hpp"
#include "harness/pool/hosts/hosts_file.hpp"
#include "harness/pool/host_identity.hpp"
#include "harness/pool/local_guest/guest_ops.hpp"
#include "harness/pool/local_guest/local_host.hpp"
#include "harness/text/join.hpp"

#include <filesystem>
#include <map>
#include <set>

namespace harness::pool::hosts {

nlohmann::json Config::settings() const {
  return {{"count", static_cast<int>(vms.size())},
          {"hosts_file", hosts_file},
          {"vms", vms},
          {"fresh_guest_per_case", fresh_guest_per_case},
          {"accelerator", "auto"}};
}

std::shared_ptr<EngineConfig> parse(yaml::Section& s, const ParseContext&) {
  auto c = std::make_shared<Config>();
  c->kind = "hosts";
  c->hosts_file = s.scalar<std::string>("hosts_file", std::string());
  c->fresh_guest_per_case = s.scalar<bool>("fresh_guest_per_case", false);
  YAML::Node v = s.get("vms", true);
  if (!v.IsSequence() || v.size() == 0) s.fail(v, s.field("vms"), "expected a non-empty list of VM names");
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string f = s.field("vms") + "[" + std::to_string(i) + "]";
    const auto n = s.as<std::string>(v[i], f);
    yaml::check_name(s, v[i], f, n, "[A-Za-z0-9_-]{1,32}");
    c->vms.push_back(n);
  }
  return c;
}

namespace {

/// A VM of the hosts file. Only a `local: true` entry is a local guest this engine can boot,
/// ask about and read the console of (harness/pool/local_guest/); for any other, liveness is
/// Unknown and the console "".
class HostsGuest : public Instance {
 public:
  /// `slot`: the local guest serving it (the entry's local_guest, else its name).
  HostsGuest(Guest g, bool local, std::string slot, bool fresh, std::string file, std::string campaign, std::string db)
      : Instance(std::move(g), local && fresh), local_(local), slot_(std::move(slot)), file_(std::move(file)),
        campaign_(std::move(campaign)), db_(std::move(db)) {}

  BootResult fresh_boot(const BootRequest& r) override {
    if (!local_)
      throw BootError(name(), "not a local guest (no `local: true` in " + file_ + "): the hosts engine cannot boot it");
    return local_guest::fresh_boot(slot_, r, campaign_, db_, "hosts", name());
  }
  Liveness liveness() override { return local_ ? local_guest::liveness(slot_) : Liveness::Unknown; }
  std::string diagnose(std::size_t max_bytes) override {
    return local_ ? local_guest::console_tail(slot_, max_bytes) : std::string();
  }
  void release() noexcept override {}  // booted by someone else: left running

 private:
  bool local_ = false;
  std::string slot_, file_, campaign_, db_;
};

class HostsPool : public Pool {
 public:
  /// `preview`: the file came as `--hosts FILE`, which plan and run read before anything
  /// boots (preview_guests); a provider.hosts_file is first read at capacity and acquire.
  HostsPool(std::string file, std::vector<std::string> vms, bool fresh, std::string campaign_file, bool preview)
      : file_(std::move(file)),
        vms_(std::move(vms)),
        fresh_(fresh),
        preview_(preview),
        campaign_file_(std::move(campaign_file)) {}

  std::string kind() const override { return "hosts"; }

  std::vector<HostCapacity> capacity() override {
    // Group the campaign's VMs by the hypervisor their entries name (when the file is readable
    // now: `harness plan` may run before it exists); cores and memory stay unknown.
    std::map<std::string, std::string> where;  // vm -> hypervisor
    if (!file_.empty() && std::filesystem::exists(file_))
      for (const auto& e : load_hosts(file_)) where[e.name] = host_of(e);
    std::vector<HostCapacity> out;
    std::map<std::string, std::size_t> index;
    for (const auto& vm : vms_) {
      const std::string h = where.count(vm) ? where[vm] : "";
      if (!index.count(h)) {
        index[h] = out.size();
        out.push_back(HostCapacity{h.empty() ? "(hypervisor not recorded)" : h, 0, 0, {}, {}, {}, {}, {}});
      }
      out[index[h]].guests.push_back(vm);
    }
    return out;
  }

  std::vector<std::unique_ptr<Instance>> acquire(const AcquireContext& ctx) override {
    campaign_ = ctx.campaign;
    db_ = ctx.db_path;
    if (file_.empty()) throw PoolError(campaign_file_ + ": field provider.hosts_file: not set and no --hosts given");
    const auto entries = load_hosts(file_);
    std::map<std::string, HostEntry> by;
    for (const auto& e : entries) by[e.name] = e;
    std::vector<std::unique_ptr<Instance>> out;
    for (const auto& vm : vms_) {
      const auto it = by.find(vm);
      if (it == by.end()) throw PoolError(file_ + ": no host named '" + vm + "' (the campaign's design uses it)");
      const HostEntry& e = it->second;
      Guest g = guest_of(e);
      g.host = host_of(e);
      hypervisors_.insert(g.host.empty() ? "not recorded" : g.host);
      if (!e.accelerator.empty()) accelerators_.insert(e.accelerator);
      out.push_back(std::make_unique<HostsGuest>(g, e.local, e.local_guest.empty() ? e.name : e.local_guest, fresh_,
                                                 file_, campaign_, db_));
    }
    return out;
  }

  void release() noexcept override {}  // booted by someone else: left running
  void release_orphans(const AcquireContext&) noexcept override {}

  GuestsPreview preview_guests(const std::vector<std::string>& vms) const override {
    return preview_ ? preview_hosts(file_, vms, campaign_file_) : GuestsPreview{};
  }

  std::string describe() const override {
    std::string s = "engine hosts: " + std::to_string(vms_.size()) + " guest(s) (" + harness::text::join(vms_) + ") from " +
                    (file_.empty() ? std::string("(no hosts file)") : file_);
    if (!hypervisors_.empty())
      s += ", hypervisor(s) " + harness::text::join(hypervisors_);
    s += accelerators_.empty()
             ? ", accelerator detected in each guest"
             : ", accelerator as listed: " + harness::text::join(accelerators_);
    return s;
  }

 private:
  /// The entry's host as its identity (harness/pool/host_identity.hpp): a `hypervisor:` URI
  /// with a keyfile= is the same host as without it.
  static std::string host_of(const HostEntry& e) {
    if (!e.hypervisor.empty()) return host_identity(e.hypervisor);
    return e.local ? local_guest::local_host_name() : "";
  }

  std::string file_;
  std::vector<std::string> vms_;
  bool fresh_ = false;
  bool preview_ = false;
  std::string campaign_file_;
  std::string campaign_, db_;
  std::set<std::string> hypervisors_, accelerators_;
};

std::unique_ptr<Pool> open(std::shared_ptr<const EngineConfig> config, const OpenContext& ctx) {
  if (!ctx.hosts_file.empty())  // --hosts FILE: this engine whatever the campaign's kind
    return std::make_unique<HostsPool>(ctx.hosts_file, config->vms, config->fresh_guest_per_case, ctx.campaign_file,
                                       true);
  auto cfg = std::dynamic_pointer_cast<const Config>(config);
  if (!cfg) throw PoolError("hosts: the provider block was not parsed by this engine");
  return std::make_unique<HostsPool>(cfg->hosts_file, cfg->vms, cfg->fresh_guest_per_case, ctx.campaign_file, false);
}

// Capabilities{}: before the hosts file is read no guest is known to boot (local: true).
[[maybe_unused]] const bool kRegistered = register_engine(
    {"hosts", "agents on VMs listed in a hosts file (harness/vm/HOSTS.md); boots nothing", Capabilities{}, parse,
     open, nullptr});  // boots nothing: no down

}  // namespace
}  // namespace harness::pool::hosts
