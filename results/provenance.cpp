// Provenance of generated artifacts (provenance.hpp).
#include "results/provenance.hpp"

#include "harness/text/join.hpp"
#include "harness/text/utc.hpp"
#include "results/db.hpp"
#include "results/store/case_queries.hpp"
#include "results/store/meta.hpp"

#include <nlohmann/json.hpp>

#include <ctime>
#include <fstream>
#include <stdexcept>

namespace results {
namespace {

/// campaign_meta's value of `key`; "" when the file has no campaign_meta or no such key.
std::string meta_or_empty(Db& db, const char* key) {
  if (!has_table(db, "campaign_meta")) return {};
  return meta_value(db, key).value_or("");
}

std::string or_unknown(const std::string& s) { return s.empty() ? "unknown" : s; }

std::string list_or_unknown(const std::vector<std::string>& v) {
  if (v.empty()) return "unknown";
  return harness::text::join(v);
}

nlohmann::ordered_json to_json(const Provenance& p) {
  nlohmann::ordered_json j;
  j["harness_version"] = p.build.version;
  j["source_commit"] = p.build.source_commit;
  j["source_dirty"] = p.build.source_dirty;
  j["campaign_name"] = p.campaign_name;
  j["campaign_kind"] = p.campaign_kind;
  j["plan_sha256"] = p.plan_sha256;
  j["campaign_sha256"] = p.campaign_sha256;
  j["generated_utc"] = p.generated_utc;
  j["command_line"] = p.command_line;
  j["accelerators"] = p.accelerators;
  j["kernels"] = p.kernels;
  j["case_commits"] = p.case_commits;
  j["synthetic"] = p.synthetic;
  return j;
}

}  // namespace

std::string synthetic_banner() {
  return "SYNTHETIC DATA: made from a synthetic DB (analysis/simulate/synthetic.hpp), not from cases that ran; its "
         "accelerator, kernel and numbers are invented";
}

bool is_synthetic_db(Db& db) {
  if (!meta_or_empty(db, "synthetic").empty()) return true;
  return has_table(db, "cases") && has_case_with_commit(db, "synthetic");
}

Provenance collect_provenance(Db& db, const BuildId& build, const std::string& command_line) {
  Provenance p;
  p.build = build;
  p.campaign_name = meta_or_empty(db, "name");
  p.campaign_kind = meta_or_empty(db, "kind");
  p.plan_sha256 = meta_or_empty(db, "schedule_sha256");
  p.campaign_sha256 = meta_or_empty(db, "campaign_sha256");
  p.generated_utc = harness::text::utc_text(static_cast<std::int64_t>(std::time(nullptr)) * 1'000'000'000);
  p.command_line = command_line;
  p.synthetic = is_synthetic_db(db);
  if (has_table(db, "cases")) {
    p.accelerators = case_accelerators(db);
    p.kernels = case_kernel_releases(db);
    p.case_commits = case_commits(db);
    if (p.campaign_name.empty()) {
      auto names = case_campaigns(db);
      if (names.size() == 1) p.campaign_name = names[0];
    }
  }
  return p;
}

std::string provenance_json(const Provenance& p) { return to_json(p).dump(2); }

std::string provenance_markdown(const Provenance& p) {
  std::string s;
  s += "- Harness: " + or_unknown(p.build.version) + ", source " + or_unknown(p.build.source_commit) +
       (p.build.source_dirty ? " (dirty: uncommitted changes)" : "") + "\n";
  s += "- Campaign: " + or_unknown(p.campaign_name) + " (kind " + or_unknown(p.campaign_kind) +
       "), plan SHA-256 " + or_unknown(p.plan_sha256) + ", campaign YAML SHA-256 " +
       or_unknown(p.campaign_sha256) + "\n";
  if (p.synthetic)
    s += "- Cases: none ran (a synthetic DB); the generator wrote accelerator " + list_or_unknown(p.accelerators) +
         ", guest kernel " + list_or_unknown(p.kernels) + " and harness source " + list_or_unknown(p.case_commits) + "\n";
  else
    s += "- Cases ran on: accelerator " + list_or_unknown(p.accelerators) + "; guest kernel " +
         list_or_unknown(p.kernels) + "; harness source " + list_or_unknown(p.case_commits) + "\n";
  s += "- Generated: " + or_unknown(p.generated_utc) + " by `" + or_unknown(p.command_line) + "`\n";
  return s;
}

void write_sidecar(const std::string& artifact_path, const Provenance& p) {
  auto j = to_json(p);
  const auto slash = artifact_path.find_last_of('/');
  j["artifact"] = slash == std::string::npos ? artifact_path : artifact_path.substr(slash + 1);
  const std::string path = artifact_path + ".meta.json";
  std::ofstream o(path);
  o << j.dump(2) << "\n";
  if (!o) throw std::runtime_error(path + ": cannot write provenance sidecar");
}

}  // namespace results
