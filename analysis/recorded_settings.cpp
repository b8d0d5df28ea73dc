// The settings a campaign DB records (see recorded_settings.hpp).
#include "analysis/recorded_settings.hpp"

#include "analysis/arms.hpp"
#include "analysis/db_columns.hpp"
#include "analysis/environment_table.hpp"
#include "results/db.hpp"
#include "results/provenance.hpp"

#include <yaml-cpp/yaml.h>

namespace analysis {
namespace {

using Settings = std::vector<std::pair<std::string, std::string>>;

/// A YAML scalar or a list of scalars as one text ("[a, b]"); null as "null".
std::string leaf_text(const YAML::Node& n) {
  if (n.IsNull()) return "null";
  if (n.IsScalar()) return n.Scalar();
  std::string s = "[";
  for (std::size_t i = 0; i < n.size(); ++i) s += (i ? ", " : "") + leaf_text(n[i]);
  return s + "]";
}

/// Every leaf of `n` under `path`: maps recurse by key ("a.b"), lists holding a map by index
/// ("regimes[1]"), other lists and scalars are leaves. An empty map has no leaf.
void flatten_yaml(const YAML::Node& n, const std::string& path, Settings& out) {
  if (n.IsMap()) {
    for (const auto& kv : n) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : leaf_text(kv.first);
      flatten_yaml(kv.second, path.empty() ? key : path + "." + key, out);
    }
    return;
  }
  bool has_map = false;
  if (n.IsSequence())
    for (const auto& x : n) has_map = has_map || x.IsMap();
  if (has_map) {
    for (std::size_t i = 0; i < n.size(); ++i) flatten_yaml(n[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  out.emplace_back("campaign YAML " + path, leaf_text(n));
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> recorded_settings(const std::string& db_path) {
  Settings out;
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  std::string yaml;
  if (has_table(db, "campaign_meta")) {
    results::Stmt q(db, "SELECT key, value FROM campaign_meta WHERE key IN ('name', 'kind', 'seed', 'campaign_sha256', "
                        "'schedule_sha256', 'campaign_yaml') ORDER BY key");
    while (q.step()) {
      if (q.text(0) == "campaign_yaml") yaml = q.opt_text(1).value_or("");
      else out.emplace_back("campaign " + q.text(0), q.opt_text(1).value_or(""));
    }
  }
  if (!yaml.empty()) {
    try {
      const YAML::Node root = YAML::Load(yaml);
      if (root.IsMap()) flatten_yaml(root, "", out);
    } catch (const YAML::Exception& e) {
      out.emplace_back("campaign YAML", std::string("unreadable: ") + e.what());
    }
  }
  bool recorded = false;
  for (const auto& a : load_arms(db, {}, {}, recorded))
    if (recorded) out.emplace_back("arm " + a.name, arm_record_text(a));
  const auto prov = results::collect_provenance(db, {}, "");
  out.emplace_back("accelerator", joined(prov.accelerators));
  out.emplace_back("guest kernel", joined(prov.kernels));
  out.emplace_back("harness commit", joined(prov.case_commits));
  std::vector<std::string> ids;
  {
    results::Stmt q(db, "SELECT case_id FROM cases WHERE status = 'completed' ORDER BY case_id");
    while (q.step()) ids.push_back(q.text(0));
  }
  for (auto& [k, v] : environment_rows(db_path, ids)) out.emplace_back("environment: " + k, v);
  return out;
}

}  // namespace analysis
