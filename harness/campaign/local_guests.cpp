// Local guests of a campaign and their takeover (see local_guests.hpp).
#include "harness/campaign/local_guests.hpp"
#include "harness/json/limited_parse.hpp"

#include "harness/campaign/campaign_db.hpp"
#include "harness/campaign/preflight.hpp"
#include "harness/campaign/runner.hpp"
#include "harness/vm/accel.hpp"
#include "harness/vm/fleet.hpp"
#include "harness/vm/paths.hpp"
#include "harness/vm/subprocess.hpp"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace harness::campaign {
namespace {

std::optional<hvm::GuestInfo> guest(const std::string& vm) {
  for (const auto& g : hvm::fleet_list(""))
    if (g.name == vm) return g;
  return std::nullopt;
}

std::string owner_path(const std::string& state_dir) { return (fs::path(state_dir) / "owner.json").string(); }

}  // namespace

std::string owner_db_path(const std::string& db) { return fs::absolute(db).lexically_normal().string(); }

std::optional<GuestOwner> read_guest_owner(const std::string& state_dir) {
  try {
    const auto j = hjson::parse_file(owner_path(state_dir));
    GuestOwner o;
    o.campaign = j.at("campaign").get<std::string>();
    o.db = j.at("db").get<std::string>();
    o.runner_pid = j.value("runner_pid", -1);
    o.qemu_pid = j.value("qemu_pid", -1);
    o.url = j.value("url", "");
    o.token_file = j.value("token_file", "");
    o.since_unix_ns = j.value("since_unix_ns", std::int64_t{0});
    return o;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void write_guest_owner(const std::string& vm, const std::string& campaign, const std::string& db) {
  const auto g = guest(vm);
  const fs::path dir = g ? fs::path(g->state_dir) : fs::path(hvm::cache_root("")) / "vms" / vm;
  fs::create_directories(dir);
  const nlohmann::json j{{"campaign", campaign},
                         {"db", owner_db_path(db)},
                         {"runner_pid", ::getpid()},
                         {"qemu_pid", g ? g->pid : -1},
                         {"url", g ? g->url : std::string()},
                         {"token_file", g ? g->token_file : std::string()},
                         {"since_unix_ns", unix_now_ns()}};
  hvm::write_file(owner_path(dir.string()), j.dump(2) + "\n", 0600);
}

void stop_owned_local_guests(const Campaign& c, const RunOptions& opt) {
  const std::string db = owner_db_path(opt.db_path);
  for (const auto& vm : c.vms) {
    const auto g = guest(vm);
    if (!g || !g->running) continue;
    const auto owner = read_guest_owner(g->state_dir);
    if (!owner || owner->campaign != c.name || owner->db != db) continue;
    std::fprintf(opt.out, "%s: stopping the guest an earlier runner of campaign %s left running (nothing left to run)\n",
                 vm.c_str(), c.name.c_str());
    hvm::run_passthrough({opt.self_exe, "vm", "down", vm});
    clear_guest_owner(vm);
  }
}

void clear_guest_owner(const std::string& vm) {
  if (const auto g = guest(vm)) {
    std::error_code ec;
    fs::remove(owner_path(g->state_dir), ec);
  }
}

std::string prepare_local_guests(const Campaign& c, const RunOptions& opt, std::FILE* out) {
  const fs::path dir = fs::absolute(opt.db_path).parent_path();
  const std::string file = (dir / (c.name + ".hosts.yaml")).string();
  const std::string db = owner_db_path(opt.db_path);
  std::vector<int> missing;  // indexes into c.vms of guests to boot
  for (std::size_t i = 0; i < c.vms.size(); ++i) {
    const std::string& vm = c.vms[i];
    if (vm != "vm" + std::to_string(i))
      throw CampaignError(c.file + ": local guests are named vm0..vmN in order; got '" + vm + "'");
    const auto g = guest(vm);
    if (!g || !g->running) {
      missing.push_back(static_cast<int>(i));
      continue;
    }
    const auto owner = read_guest_owner(g->state_dir);
    if (!owner || owner->campaign != c.name || owner->db != db)
      throw CampaignError(
          vm + " is already running (qemu pid " + std::to_string(g->pid) + ") and was not booted for campaign " +
          c.name + " into " + db +
          (owner ? " (it serves campaign " + owner->campaign + ", DB " + owner->db + ")" : " (booted by hand?)") +
          ": stop it with `harness vm down " + vm + "`, or run that campaign's command again");
    // Booted by an earlier runner of this campaign and DB; that runner is gone (DB lock).
    Host h;
    h.name = vm;
    h.url = g->url;
    h.token_file = g->token_file;
    h.accelerator = g->accelerator;
    h.local = true;
    HostWait w = opt.host_wait;
    w.total_s = std::min(w.total_s, 60);  // a local guest that does not answer in a minute is rebooted
    const auto still = wait_for_agents({h}, w, out);
    if (still.empty()) {
      std::fprintf(out, "%s: adopting the running guest (qemu pid %d, %s) that an earlier runner (pid %d) of "
                        "campaign %s booted\n", vm.c_str(), g->pid, g->url.c_str(), owner->runner_pid, c.name.c_str());
    } else {
      std::fprintf(out, "%s: guest booted by an earlier runner (pid %d) does not answer (%s): rebooting it\n",
                   vm.c_str(), owner->runner_pid, still.front().c_str());
      const int rc = hvm::run_passthrough({opt.self_exe, "vm", "reboot", vm});
      if (rc != 0)
        throw CampaignError("local VMs: `harness vm reboot " + vm + "` exited with status " + std::to_string(rc));
    }
  }
  if (!missing.empty()) {
    for (int i : missing) write_guest_owner(c.vms[i], c.name, opt.db_path);  // before the boot (kill -9 during it)
    const std::string accel = hvm::effective_accel_request(opt.accelerator, c.accelerator);
    // One `vm up` for a contiguous block starting at vm0 (the first run), else one per guest.
    std::vector<std::pair<int, int>> runs;  // (first index, count)
    for (int i : missing) {
      if (!runs.empty() && runs.back().first + runs.back().second == i) ++runs.back().second;
      else runs.emplace_back(i, 1);
    }
    for (const auto& [first, count] : runs) {
      const int rc = hvm::run_passthrough({opt.self_exe, "vm", "up", "--count", std::to_string(count), "--first-index",
                                     std::to_string(first), "--hosts-file", file, "--memory-mib",
                                     std::to_string(c.memory_mib), "--vcpus", std::to_string(c.vcpus),
                                     "--fresh-per-case", c.fresh_guest_per_case ? "1" : "0", "--accel", accel});
      if (rc != 0)
        throw CampaignError("local VMs: `harness vm up --count " + std::to_string(count) + " --first-index " +
                            std::to_string(first) + " --hosts-file " + file + "` exited with status " +
                            std::to_string(rc));
    }
  }
  std::vector<hvm::GuestInfo> mine;
  for (const auto& vm : c.vms) {
    write_guest_owner(vm, c.name, opt.db_path);
    mine.push_back(*guest(vm));
  }
  hvm::write_hosts_file(file, mine, c.fresh_guest_per_case);
  return file;
}

}  // namespace harness::campaign
