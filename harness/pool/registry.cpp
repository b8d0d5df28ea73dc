// The engine registry (see engine.hpp).
#include "harness/pool/engine.hpp"

#include "harness/text/join.hpp"

#include <map>
#include <mutex>
#include <regex>

namespace harness::pool {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, Engine> engines;
};

Registry& registry() {
  static Registry r;  // constructed on first use: registrations run at static initialisation
  return r;
}

}  // namespace

std::vector<Guest> addresses(const std::vector<std::unique_ptr<Instance>>& instances) {
  std::vector<Guest> out;
  out.reserve(instances.size());
  for (const auto& i : instances) out.push_back(i->guest());
  return out;
}

const char* to_string(Liveness l) {
  switch (l) {
    case Liveness::Running: return "running";
    case Liveness::Gone: return "gone";
    case Liveness::Unknown: break;
  }
  return "unknown";
}

bool register_engine(Engine e) {
  if (!std::regex_match(e.kind, std::regex("[a-z0-9-]+")))
    throw std::logic_error("register_engine: kind '" + e.kind + "' is not [a-z0-9-]+");
  if (!e.parse || !e.open) throw std::logic_error("register_engine: " + e.kind + " has no parse or open");
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const std::string kind = e.kind;
  if (!r.engines.emplace(kind, std::move(e)).second)
    throw std::logic_error("register_engine: engine '" + kind + "' registered twice");
  return true;
}

const Engine* find_engine(const std::string& kind) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto it = r.engines.find(kind);
  return it == r.engines.end() ? nullptr : &it->second;  // map nodes are stable
}

std::vector<std::string> engine_kinds() {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> out;
  for (const auto& [k, e] : r.engines) out.push_back(k);
  return out;
}

std::string engine_kinds_where(const std::function<bool(const Capabilities&)>& pred) {
  std::vector<std::string> kinds;
  for (const auto& k : engine_kinds())
    if (pred(find_engine(k)->capabilities)) kinds.push_back(k);
  return text::join(kinds, " or ");
}

std::string engine_kind_of_host(const std::string& host) {
  if (host.rfind("local:", 0) == 0) return "local-qemu";
  if (host.find("://") != std::string::npos) return "libvirt";
  return "hosts";
}

std::unique_ptr<Pool> open_pool(std::shared_ptr<const EngineConfig> config, const OpenContext& ctx) {
  if (!config) throw PoolError(ctx.campaign_file + ": the campaign has no provider block parsed");
  const std::string kind = ctx.hosts_file.empty() ? config->kind : "hosts";
  const Engine* e = find_engine(kind);
  if (!e) throw PoolError("no engine '" + kind + "' in this harness build (engines: " + text::join(engine_kinds()) + ")");
  return e->open(std::move(config), ctx);
}

}  // namespace harness::pool
