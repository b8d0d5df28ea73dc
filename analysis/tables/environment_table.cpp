// Table 1 environment rows (see environment_table.hpp).
#include "analysis/tables/environment_table.hpp"
#include "harness/json/limited_parse.hpp"

#include "harness/text/join.hpp"
#include "results/db.hpp"
#include "results/store/artifacts.hpp"
#include "results/store/case_queries.hpp"
#include "results/store/cases.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>

namespace analysis {
namespace {

using nlohmann::json;

json parse_or_null(const std::optional<std::string>& s) {
  if (!s) return nullptr;
  json j = harness::json::parse_or_discarded(*s);
  return j.is_discarded() ? json(nullptr) : j;
}

// Value at a '/'-separated path, or null.
const json* at(const json& j, const std::string& path) {
  const json* cur = &j;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto slash = path.find('/', start);
    const std::string key = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!cur->is_object() || !cur->contains(key)) return nullptr;
    cur = &(*cur)[key];
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return cur->is_null() ? nullptr : cur;
}

std::string text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("error")) return "error: " + text(v["error"]);
  return v.dump();
}

std::string mglru(const json& v) {
  const std::string s = text(v);
  if (s == "absent") return "absent (kernel without MGLRU)";
  try {
    const unsigned long bits = std::stoul(s, nullptr, 0);
    return fmt::format("{} ({})", bits == 0 ? "off" : "on", s);
  } catch (...) {
    return s;
  }
}

/// A present value as its text (text()), or nullopt.
std::optional<std::string> text_of(const json* v) { return v ? std::optional<std::string>(text(*v)) : std::nullopt; }

/// environment_json's `env_key`, else what qualification recorded (qualification_json `qual_path`).
std::optional<std::string> env_or_recorded(const json& e, const char* env_key, const json& q, const char* qual_path) {
  auto v = text_of(at(e, env_key));
  return v ? v : text_of(at(q, qual_path));
}

/// One row of the table: its setting and how a case's records give its value (nullopt: not recorded).
struct EnvironmentItem {
  std::string setting;
  std::function<std::optional<std::string>(const json& env, const json& qual, const json& sqlite)> get;
};

/// The rows, in the table's order. `env` is environment_json with the runner's columns
/// host_uri and overcommitted added; `qual` qualification_json; `sqlite` the canary-sqlite.json artifact.
const std::vector<EnvironmentItem>& environment_items() {
  static const std::vector<EnvironmentItem> items = {
      // Where the case ran (the runner's columns, put in `env` by read_case_records under these keys).
      {"hypervisor host (cases.host_uri)", [](const json& e, const json&, const json&) { return text_of(at(e, "host_uri")); }},
      {"host overcommitted (cases.overcommitted)", [](const json& e, const json&, const json&) -> std::optional<std::string> {
         const json* v = at(e, "overcommitted");
         if (!v || !v->is_number()) return std::nullopt;
         return std::string(v->get<int>() ? "yes (provider.overcommit: true)" : "no");
       }},
      {"guest kernel release", [](const json& e, const json& q, const json&) {
         return env_or_recorded(e, "kernel_release", q, "recorded/kernel_release");
       }},
      {"guest kernel version", [](const json& e, const json&, const json&) { return text_of(at(e, "uname/version")); }},
      {"kernel command line", [](const json& e, const json& q, const json&) {
         return env_or_recorded(e, "cmdline", q, "recorded/kernel_cmdline");
       }},
      {"clocksource", [](const json& e, const json& q, const json&) {
         return env_or_recorded(e, "clocksource", q, "recorded/clocksource");
       }},
      {"MGLRU (/sys/kernel/mm/lru_gen/enabled)", [](const json& e, const json& q, const json&) -> std::optional<std::string> {
         const json* v = at(e, "mglru_enabled");
         if (!v) v = at(q, "recorded/mglru_enabled");
         return v ? std::optional<std::string>(mglru(*v)) : std::nullopt;
       }},
      {"transparent hugepages (enabled)", [](const json& e, const json& q, const json&) {
         return env_or_recorded(e, "thp_enabled", q, "recorded/thp_enabled");
       }},
      {"vm.swappiness", [](const json& e, const json& q, const json&) {
         return env_or_recorded(e, "swappiness", q, "recorded/swappiness");
       }},
      {"guest MemTotal (MiB)", [](const json& e, const json& q, const json&) -> std::optional<std::string> {
         const json* v = at(e, "memtotal_kib");
         if (!v) v = at(q, "recorded/mem_total_kib");
         if (!v || !v->is_number()) return std::nullopt;
         return fmt::format("{:.1f}", v->get<double>() / 1024.0);
       }},
      {"online CPUs", [](const json& e, const json&, const json&) { return text_of(at(e, "online_cpus")); }},
      {"page size (KiB)", [](const json& e, const json&, const json&) -> std::optional<std::string> {
         const json* v = at(e, "page_size_bytes");
         if (!v || !v->is_number()) return std::nullopt;
         return fmt::format("{:g}", v->get<double>() / 1024.0);
       }},
      {"zswap (/sys/module/zswap/parameters/enabled)", [](const json& e, const json& q, const json&) {
         return env_or_recorded(e, "zswap_enabled", q, "recorded/zswap_enabled");
       }},
      {"data disk cache mode (qemu)", [](const json& e, const json&, const json&) { return text_of(at(e, "data_disk_cache")); }},
      {"PSI (CONFIG_PSI / CONFIG_PSI_DEFAULT_DISABLED)", [](const json&, const json& q, const json&) -> std::optional<std::string> {
         const json* a = at(q, "recorded/kernel_config/CONFIG_PSI");
         const json* b = at(q, "recorded/kernel_config/CONFIG_PSI_DEFAULT_DISABLED");
         if (!a && !b) return std::nullopt;
         return fmt::format("{} / {}", a ? text(*a) : "?", b ? text(*b) : "?");
       }},
      {"zram algorithms available", [](const json&, const json& q, const json&) -> std::optional<std::string> {
         const json* v = at(q, "recorded/zram_algorithms");
         if (!v || !v->is_array()) return std::nullopt;
         return harness::text::join(*v, ", ", text);
       }},
      {"qualification (harness qualify at case start)", [](const json&, const json& q, const json&) -> std::optional<std::string> {
         const json* v = at(q, "passed");
         if (!v || !v->is_boolean()) return std::nullopt;
         return std::string(v->get<bool>() ? "passed" : "FAILED");
       }},
      {"SQLite canary rows", [](const json&, const json&, const json& s) { return text_of(at(s, "rows")); }},
      {"SQLite canary payload (bytes per row)", [](const json&, const json&, const json& s) { return text_of(at(s, "payload_bytes")); }},
      {"SQLite canary point queries per request", [](const json&, const json&, const json& s) { return text_of(at(s, "queries_per_request")); }},
  };
  return items;
}

/// One case's records: environment_json (an object, host_uri and overcommitted added),
/// qualification_json and the canary-sqlite.json artifact; null where absent or not JSON (a
/// column or table the DB's schema version lacks: absent).
struct CaseRecords {
  json env = nullptr, qual = nullptr, sqlite = nullptr;
};
CaseRecords read_case_records(results::Db& db, results::CaseReader& cases, const std::string& id) {
  CaseRecords r;
  if (const auto c = cases.get(id)) {
    r.env = parse_or_null(c->environment_json);
    r.qual = parse_or_null(c->qualification_json);
    if (!r.env.is_object()) r.env = json::object();
    if (c->host_uri) r.env["host_uri"] = *c->host_uri;
    if (c->overcommitted) r.env["overcommitted"] = *c->overcommitted;
  }
  r.sqlite = parse_or_null(results::read_artifact(db, id, "canary-sqlite.json"));
  return r;
}

/// The cell of one setting from its values' counts over `cases` cases: the one value (with
/// how many recorded it when not all), "varies: a (n cases); b (m cases)" or "not recorded".
std::string setting_value(const std::map<std::string, int>& m, std::size_t cases) {
  int n = 0;
  for (const auto& [v, k] : m) n += k;
  std::string value;
  if (m.empty()) {
    value = "not recorded";
  } else if (m.size() == 1) {
    value = m.begin()->first;
    if (n < static_cast<int>(cases)) value += fmt::format(" ({} of {} cases recorded it)", n, cases);
  } else {
    value = "varies:";
    for (const auto& [v, k] : m) value += fmt::format(" {} ({} case{});", v, k, k == 1 ? "" : "s");
    value.pop_back();
  }
  return value;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> environment_rows(const std::string& db_path,
                                                                  const std::vector<std::string>& case_ids) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  results::CaseReader cases(db);
  const std::vector<EnvironmentItem>& items = environment_items();
  std::vector<std::map<std::string, int>> seen(items.size());
  for (const auto& id : case_ids) {
    const CaseRecords r = read_case_records(db, cases, id);
    for (std::size_t i = 0; i < items.size(); ++i)
      if (auto v = items[i].get(r.env, r.qual, r.sqlite)) ++seen[i][*v];
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < items.size(); ++i) out.emplace_back(items[i].setting, setting_value(seen[i], case_ids.size()));
  return out;
}

std::string overcommit_warning(const std::string& db_path) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  const auto over = results::overcommitted_cases(db);
  if (over.count == 0) return "";
  return fmt::format(
      "{} case(s) ran on an overcommitted hypervisor host ({}; provider.overcommit: true allowed more guest vCPUs "
      "than cores - 1 or more guest memory than available): their timings include the guests' contention for the "
      "host.",
      over.count, over.hosts.value_or("host not recorded"));
}

}  // namespace analysis
