// Provenance of generated artifacts (provenance.hpp).
#include "results/provenance.hpp"

#include "harness/text/join.hpp"
#include "harness/text/utc.hpp"
#include "results/db.hpp"

#include <nlohmann/json.hpp>

#include <ctime>
#include <fstream>
#include <stdexcept>

namespace results {
namespace {

std::string meta(Db& db, const char* key) {
  if (!has_table(db, "campaign_meta")) return {};
  Stmt q(db, "SELECT value FROM campaign_meta WHERE key=?1");
  q.bind(1, key);
  return q.step() ? q.text(0) : std::string{};
}

std::vector<std::string> distinct(Db& db, const char* sql) {
  std::vector<std::string> out;
  Stmt q(db, sql);
  while (q.step())
    if (!q.is_null(0)) out.push_back(q.text(0));
  return out;
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
  return j;
}

}  // namespace

Provenance collect_provenance(Db& db, const BuildId& build, const std::string& command_line) {
  Provenance p;
  p.build = build;
  p.campaign_name = meta(db, "name");
  p.campaign_kind = meta(db, "kind");
  p.plan_sha256 = meta(db, "schedule_sha256");
  p.campaign_sha256 = meta(db, "campaign_sha256");
  p.generated_utc = harness::text::utc_text(static_cast<std::int64_t>(std::time(nullptr)) * 1'000'000'000);
  p.command_line = command_line;
  if (has_table(db, "cases")) {
    p.accelerators = distinct(db, "SELECT DISTINCT accelerator FROM cases ORDER BY 1");
    p.kernels = distinct(db, "SELECT DISTINCT kernel_release FROM cases ORDER BY 1");
    p.case_commits = distinct(db,
                              "SELECT DISTINCT source_commit || CASE WHEN source_dirty = 1 THEN '-dirty' "
                              "ELSE '' END FROM cases ORDER BY 1");
    if (p.campaign_name.empty()) {
      auto names = distinct(db, "SELECT DISTINCT campaign FROM cases ORDER BY 1");
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
