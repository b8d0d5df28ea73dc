// Table 1 environment rows (see environment_table.hpp).
#include "analysis/environment_table.hpp"
#include "harness/json/limited_parse.hpp"

#include "harness/text/join.hpp"
#include "results/db.hpp"

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

/// The recorded string (or JSON text) of `v`, nullopt when absent.
std::optional<std::string> recorded_text(const json* v) { return v ? std::optional<std::string>(text(*v)) : std::nullopt; }

/// The value at `env_path` of the environment, else at `qual_path` of the qualification record.
std::optional<std::string> env_or_qual(const json& e, const json& q, const char* env_path, const char* qual_path) {
  auto v = recorded_text(at(e, env_path));
  return v ? v : recorded_text(at(q, qual_path));
}

/// One environment row: its setting and how to read it from a case's environment
/// (environment_json with host_uri and overcommitted added), qualification record and SQLite
/// canary artifact.
struct EnvItem {
  std::string setting;
  std::function<std::optional<std::string>(const json& env, const json& qual, const json& sqlite)> get;
};

/// Where the case ran and its kernel (the runner's columns, put in `env` under these keys).
std::vector<EnvItem> host_and_kernel_items() {
  return {
      {"hypervisor host (cases.host_uri)", [](const json& e, const json&, const json&) { return recorded_text(at(e, "host_uri")); }},
      {"host overcommitted (cases.overcommitted)", [](const json& e, const json&, const json&) -> std::optional<std::string> {
         const json* v = at(e, "overcommitted");
         if (!v || !v->is_number()) return std::nullopt;
         return std::string(v->get<int>() ? "yes (provider.overcommit: true)" : "no");
       }},
      {"guest kernel release",
       [](const json& e, const json& q, const json&) { return env_or_qual(e, q, "kernel_release", "recorded/kernel_release"); }},
      {"guest kernel version", [](const json& e, const json&, const json&) { return recorded_text(at(e, "uname/version")); }},
      {"kernel command line",
       [](const json& e, const json& q, const json&) { return env_or_qual(e, q, "cmdline", "recorded/kernel_cmdline"); }},
      {"clocksource",
       [](const json& e, const json& q, const json&) { return env_or_qual(e, q, "clocksource", "recorded/clocksource"); }},
  };
}

/// The guest's memory-management settings and shape.
std::vector<EnvItem> memory_items() {
  return {
      {"MGLRU (/sys/kernel/mm/lru_gen/enabled)", [](const json& e, const json& q, const json&) -> std::optional<std::string> {
         const json* v = at(e, "mglru_enabled");
         if (!v) v = at(q, "recorded/mglru_enabled");
         return v ? std::optional<std::string>(mglru(*v)) : std::nullopt;
       }},
      {"transparent hugepages (enabled)",
       [](const json& e, const json& q, const json&) { return env_or_qual(e, q, "thp_enabled", "recorded/thp_enabled"); }},
      {"vm.swappiness",
       [](const json& e, const json& q, const json&) { return env_or_qual(e, q, "swappiness", "recorded/swappiness"); }},
      {"guest MemTotal (MiB)", [](const json& e, const json& q, const json&) -> std::optional<std::string> {
         const json* v = at(e, "memtotal_kib");
         if (!v) v = at(q, "recorded/mem_total_kib");
         if (!v || !v->is_number()) return std::nullopt;
         return fmt::format("{:.1f}", v->get<double>() / 1024.0);
       }},
      {"online CPUs", [](const json& e, const json&, const json&) { return recorded_text(at(e, "online_cpus")); }},
      {"page size (KiB)", [](const json& e, const json&, const json&) -> std::optional<std::string> {
         const json* v = at(e, "page_size_bytes");
         if (!v || !v->is_number()) return std::nullopt;
         return fmt::format("{:g}", v->get<double>() / 1024.0);
       }},
      {"zswap (/sys/module/zswap/parameters/enabled)",
       [](const json& e, const json& q, const json&) { return env_or_qual(e, q, "zswap_enabled", "recorded/zswap_enabled"); }},
      {"data disk cache mode (qemu)", [](const json& e, const json&, const json&) { return recorded_text(at(e, "data_disk_cache")); }},
  };
}

/// What the qualification recorded, and the SQLite canary's database.
std::vector<EnvItem> qualification_and_canary_items() {
  return {
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
      {"SQLite canary rows", [](const json&, const json&, const json& s) { return recorded_text(at(s, "rows")); }},
      {"SQLite canary payload (bytes per row)", [](const json&, const json&, const json& s) { return recorded_text(at(s, "payload_bytes")); }},
      {"SQLite canary point queries per request",
       [](const json&, const json&, const json& s) { return recorded_text(at(s, "queries_per_request")); }},
  };
}

/// Every environment row, in the table's order.
const std::vector<EnvItem>& environment_items() {
  static const std::vector<EnvItem> items = [] {
    std::vector<EnvItem> v = host_and_kernel_items();
    for (auto* more : {memory_items, qualification_and_canary_items})
      for (auto& x : more()) v.push_back(std::move(x));
    return v;
  }();
  return items;
}

/// A case's environment (with host_uri and overcommitted), qualification record and SQLite
/// canary artifact, each null when the DB does not record it.
struct CaseRecords {
  json env = nullptr, qual = nullptr, sqlite = nullptr;
};

/// Which of the optional columns and tables the DB has.
struct RecordColumns {
  bool env, qual, art, host, over;
};

CaseRecords case_records(results::Db& db, const RecordColumns& has, const std::string& id) {
  CaseRecords r;
  if (has.env || has.qual || has.host || has.over) {
    results::Stmt st(db, std::string("SELECT ") + (has.env ? "environment_json" : "NULL") + ", " +
                             (has.qual ? "qualification_json" : "NULL") + ", " + (has.host ? "host_uri" : "NULL") +
                             ", " + (has.over ? "overcommitted" : "NULL") + " FROM cases WHERE case_id = ?1");
    st.bind(1, id);
    if (st.step()) {
      r.env = parse_or_null(st.opt_text(0));
      r.qual = parse_or_null(st.opt_text(1));
      if (!r.env.is_object()) r.env = json::object();
      if (auto h = st.opt_text(2)) r.env["host_uri"] = *h;
      if (auto o = st.opt_int64(3)) r.env["overcommitted"] = *o;
    }
  }
  if (has.art) {
    results::Stmt st(db, "SELECT content FROM artifacts WHERE case_id = ?1 AND name = 'canary-sqlite.json'");
    st.bind(1, id);
    if (st.step()) r.sqlite = parse_or_null(st.opt_text(0));
  }
  return r;
}

/// The row's value from the values its cases recorded (value -> cases): "not recorded", the one
/// value (with how many of `n_cases` recorded it when not all), or "varies: ..." with the counts.
std::string recorded_value(const std::map<std::string, int>& m, std::size_t n_cases) {
  int n = 0;
  for (const auto& [v, k] : m) n += k;
  if (m.empty()) return "not recorded";
  if (m.size() == 1) {
    std::string value = m.begin()->first;
    if (n < static_cast<int>(n_cases)) value += fmt::format(" ({} of {} cases recorded it)", n, n_cases);
    return value;
  }
  std::string value = "varies:";
  for (const auto& [v, k] : m) value += fmt::format(" {} ({} case{});", v, k, k == 1 ? "" : "s");
  value.pop_back();
  return value;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> environment_rows(const std::string& db_path,
                                                                  const std::vector<std::string>& case_ids) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  const RecordColumns has{has_column(db, "cases", "environment_json"), has_column(db, "cases", "qualification_json"),
                          has_table(db, "artifacts"), has_column(db, "cases", "host_uri"),
                          has_column(db, "cases", "overcommitted")};
  const auto& items = environment_items();
  std::vector<std::map<std::string, int>> seen(items.size());
  for (const auto& id : case_ids) {
    const CaseRecords c = case_records(db, has, id);
    for (std::size_t i = 0; i < items.size(); ++i)
      if (auto v = items[i].get(c.env, c.qual, c.sqlite)) ++seen[i][*v];
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < items.size(); ++i) out.emplace_back(items[i].setting, recorded_value(seen[i], case_ids.size()));
  return out;
}

std::string overcommit_warning(const std::string& db_path) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  if (!has_column(db, "cases", "overcommitted")) return "";
  results::Stmt q(db, "SELECT count(*), group_concat(DISTINCT host_uri) FROM cases WHERE overcommitted = 1");
  if (!q.step() || q.int64(0) == 0) return "";
  return fmt::format(
      "{} case(s) ran on an overcommitted hypervisor host ({}; provider.overcommit: true allowed more guest vCPUs "
      "than cores - 1 or more guest memory than available): their timings include the guests' contention for the "
      "host.",
      q.int64(0), q.opt_text(1).value_or("host not recorded"));
}

}  // namespace analysis
