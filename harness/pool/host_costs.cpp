// Measured per-host costs between runs (see host_costs.hpp).
#include "harness/pool/host_costs.hpp"

#include "harness/digest/sha256.hpp"
#include "harness/json/limited_parse.hpp"
#include "harness/pool/host_identity.hpp"
#include "harness/vm/accel.hpp"
#include "harness/vm/paths.hpp"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>

namespace fs = std::filesystem;

namespace harness::pool {
namespace {

std::mutex& file_mutex() {
  static std::mutex mu;  // one writer at a time in this process (workers record boots in parallel)
  return mu;
}

std::int64_t now_unix() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

fs::path file_of(const std::string& engine, const std::string& host, const std::string& dir) {
  return fs::path(host_costs_dir(dir)) /
         ("host-costs-" + harness::digest::sha256_hex(engine + "|" + host_identity(host)).substr(0, 16) + ".json");
}

/// The file's JSON, or an empty object when it is absent, unreadable or of another host.
nlohmann::json load(const fs::path& f, const std::string& engine, const std::string& host) {
  std::ifstream in(f, std::ios::binary);
  if (!in) return nlohmann::json::object();
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    auto j = harness::json::parse(ss.str(), f.string());
    if (!j.is_object() || j.value("engine", "") != engine || j.value("host", "") != host_identity(host))
      return nlohmann::json::object();
    return j;
  } catch (const std::exception&) {
    return nlohmann::json::object();
  }
}

void update(const std::string& engine, const std::string& host, const std::string& dir,
            const std::function<void(nlohmann::json&)>& change) {
  std::lock_guard<std::mutex> lock(file_mutex());
  try {
    const fs::path f = file_of(engine, host, dir);
    nlohmann::json j = load(f, engine, host);
    j["engine"] = engine;
    j["host"] = host_identity(host);
    change(j);
    std::error_code ec;
    fs::create_directories(f.parent_path(), ec);
    const std::string tmp = f.string() + ".tmp." + std::to_string(::getpid());
    harness::vm::write_file(tmp, j.dump(2) + "\n");
    fs::rename(tmp, f);
  } catch (const std::exception&) {
    // a measurement that cannot be kept is only lost (host_costs.hpp)
  }
}

Measured one(const nlohmann::json& j, const char* key) {
  Measured m;
  if (!j.contains(key) || !j[key].is_object()) return m;
  m.seconds = j[key].value("s", -1.0);
  m.unix_time = j[key].value("at", std::int64_t{0});
  m.samples = m.known() ? 1 : 0;
  return m;
}

}  // namespace

std::string host_costs_dir(const std::string& dir) { return dir.empty() ? harness::vm::machine_probe_dir() : dir; }

HostCosts read_host_costs(const std::string& engine, const std::string& host, const std::string& dir) {
  HostCosts c;
  c.engine = engine;
  c.host = host_identity(host);
  const nlohmann::json j = load(file_of(engine, host, dir), engine, host);
  c.accelerator = j.value("accelerator", "");
  c.kvm_trial = one(j, "kvm_trial");
  c.upload = one(j, "upload");
  std::vector<double> boots;
  if (j.contains("boots") && j["boots"].is_array())
    for (const auto& b : j["boots"])
      if (b.is_object() && b.value("s", -1.0) >= 0) {
        boots.push_back(b["s"].get<double>());
        c.boot.unix_time = std::max(c.boot.unix_time, b.value("at", std::int64_t{0}));
      }
  if (!boots.empty()) {
    std::sort(boots.begin(), boots.end());
    const std::size_t n = boots.size();
    c.boot.seconds = n % 2 ? boots[n / 2] : (boots[n / 2 - 1] + boots[n / 2]) / 2;
    c.boot.samples = static_cast<int>(n);
  }
  return c;
}

void record_boot(const std::string& engine, const std::string& host, const std::string& accelerator, double seconds,
                 const std::string& dir) {
  if (seconds < 0) return;
  update(engine, host, dir, [&](nlohmann::json& j) {
    if (j.value("accelerator", "") != accelerator || !j.contains("boots") || !j["boots"].is_array())
      j["boots"] = nlohmann::json::array();  // another accelerator: its boots say nothing of this one's
    j["accelerator"] = accelerator;
    auto& b = j["boots"];
    b.push_back({{"s", seconds}, {"at", now_unix()}});
    while (b.size() > kBootSamples) b.erase(b.begin());
  });
}

void record_kvm_trial(const std::string& engine, const std::string& host, double seconds, const std::string& dir) {
  if (seconds < 0) return;
  update(engine, host, dir, [&](nlohmann::json& j) { j["kvm_trial"] = {{"s", seconds}, {"at", now_unix()}}; });
}

void record_upload(const std::string& engine, const std::string& host, double seconds, const std::string& dir) {
  if (seconds < 0) return;
  update(engine, host, dir, [&](nlohmann::json& j) { j["upload"] = {{"s", seconds}, {"at", now_unix()}}; });
}

std::string utc_date(std::int64_t unix_time) {
  const std::time_t t = static_cast<std::time_t>(unix_time);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace harness::pool
