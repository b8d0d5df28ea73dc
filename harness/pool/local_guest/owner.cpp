// Ownership of local guests (see owner.hpp).
#include "harness/pool/local_guest/owner.hpp"
#include "harness/json/limited_parse.hpp"
#include "harness/kernel/wall_clock.hpp"

#include "harness/vm/fleet.hpp"
#include "harness/vm/paths.hpp"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <filesystem>

namespace fs = std::filesystem;

namespace harness::pool::local_guest {
namespace {

std::optional<harness::vm::GuestInfo> guest(const std::string& vm) {
  for (const auto& g : harness::vm::fleet_list(""))
    if (g.name == vm) return g;
  return std::nullopt;
}

std::string owner_path(const std::string& state_dir) { return (fs::path(state_dir) / "owner.json").string(); }

using harness::kernel::unix_now_ns;

}  // namespace

std::string owner_db_path(const std::string& db) { return fs::absolute(db).lexically_normal().string(); }

bool owned_by(const std::optional<GuestOwner>& o, const std::string& campaign, const std::string& db) {
  return o && o->campaign == campaign && o->db == owner_db_path(db);
}

std::optional<GuestOwner> read_guest_owner(const std::string& state_dir) {
  try {
    const auto j = harness::json::parse_file(owner_path(state_dir));
    GuestOwner o;
    o.campaign = j.at("campaign").get<std::string>();
    o.db = j.at("db").get<std::string>();
    o.guest = j.value("guest", "");
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

void write_guest_owner(const std::string& vm, const std::string& campaign, const std::string& db,
                       const std::string& serves) {
  const auto g = guest(vm);
  const fs::path dir = g ? fs::path(g->state_dir) : fs::path(harness::vm::cache_root("")) / "vms" / vm;
  fs::create_directories(dir);
  const nlohmann::json j{{"campaign", campaign},
                         {"db", owner_db_path(db)},
                         {"guest", serves.empty() ? vm : serves},
                         {"runner_pid", ::getpid()},
                         {"qemu_pid", g ? g->pid : -1},
                         {"url", g ? g->url : std::string()},
                         {"token_file", g ? g->token_file : std::string()},
                         {"since_unix_ns", unix_now_ns()}};
  harness::vm::write_file(owner_path(dir.string()), j.dump(2) + "\n", 0600);
}

void clear_guest_owner(const std::string& vm) {
  if (const auto g = guest(vm)) {
    std::error_code ec;
    fs::remove(owner_path(g->state_dir), ec);
  }
}

}  // namespace harness::pool::local_guest
