// The settings a campaign DB records (see recorded_settings.hpp).
#include "analysis/compare/recorded_settings.hpp"

#include "analysis/data/arms.hpp"
#include "analysis/tables/environment_table.hpp"
#include "harness/text/join.hpp"
#include "harness/yaml/leaf_paths.hpp"
#include "results/db.hpp"
#include "results/provenance.hpp"
#include "results/store/case_queries.hpp"
#include "results/store/meta.hpp"

#include "harness/yaml/strict_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <set>

namespace analysis {
namespace {

using Settings = std::vector<std::pair<std::string, std::string>>;

/// A YAML scalar or a list of scalars as one text ("[a, b]"); null as "null".
std::string leaf_text(const YAML::Node& n) {
  if (n.IsNull()) return "null";
  if (n.IsScalar()) return n.Scalar();
  return "[" + harness::text::join(n, ", ", [](const YAML::Node& x) { return leaf_text(x); }) + "]";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> recorded_settings(const std::string& db_path) {
  Settings out;
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  std::string yaml;
  if (has_table(db, "campaign_meta")) {
    static const std::set<std::string> kRecorded = {"name", "kind", "seed", "campaign_sha256", "schedule_sha256",
                                                    "campaign_yaml"};
    for (const auto& [key, value] : results::meta_map(db)) {  // in key order
      if (!kRecorded.count(key)) continue;
      if (key == "campaign_yaml") yaml = value;
      else out.emplace_back("campaign " + key, value);
    }
  }
  if (!yaml.empty()) {
    try {
      const YAML::Node root = harness::yaml::parse(yaml, db_path + " campaign_meta.campaign_yaml");
      if (root.IsMap())
        for (const auto& [path, leaf] : harness::yaml::leaf_paths(root)) out.emplace_back("campaign YAML " + path, leaf_text(leaf));
    } catch (const harness::yaml::InputError& e) {
      out.emplace_back("campaign YAML", std::string("unreadable: ") + e.what());
    }
  }
  bool recorded = false;
  for (const auto& a : load_arms(db, {}, {}, recorded))
    if (recorded) out.emplace_back("arm " + a.name, arm_record_text(a));
  const auto prov = results::collect_provenance(db, {}, "");
  out.emplace_back("accelerator", harness::text::join(prov.accelerators));
  out.emplace_back("guest kernel", harness::text::join(prov.kernels));
  out.emplace_back("harness commit", harness::text::join(prov.case_commits));
  const std::vector<std::string> ids = results::completed_case_ids(db);
  for (auto& [k, v] : environment_rows(db_path, ids)) out.emplace_back("environment: " + k, v);
  return out;
}

}  // namespace analysis
