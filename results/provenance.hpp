#pragma once
// Provenance of a generated artifact (report.md/json/html, every CSV sidecar, JUnit):
// which harness build made it, from which campaign plan, when, by what command line,
// and which accelerators and guest kernels ran the cases it summarises.
//
// Sources: the build (harness/build_info.hpp, passed in by the caller so that this
// library does not depend on the configure step), the DB's campaign_meta (name, kind,
// schedule_sha256) and cases (accelerator, kernel_release, source_commit), and the
// command line recorded by the `harness` executable.
#include <string>
#include <vector>

namespace results {

class Db;

/// The harness build that writes an artifact.
struct BuildId {
  std::string version;        // CMake project version, e.g. "0.3.0"
  std::string source_commit;  // 40 hex, or "unknown"
  bool source_dirty = false;  // uncommitted changes at configure time
};

/// Everything an artifact's header records. Empty strings mean "not recorded" and are
/// written as "unknown".
struct Provenance {
  BuildId build;
  std::string campaign_name;   // campaign_meta.name
  std::string campaign_kind;   // campaign_meta.kind (smoke | pilot | confirmatory | ci | ...)
  std::string plan_sha256;     // campaign_meta.schedule_sha256 (the preregistration)
  std::string campaign_sha256; // campaign_meta.campaign_sha256 (the campaign YAML as planned)
  std::string generated_utc;   // ISO 8601 UTC, second resolution, e.g. 2026-11-30T22:13:20Z
  std::string command_line;    // argv joined, each argument shell-quoted when needed
  std::vector<std::string> accelerators;    // distinct cases.accelerator, sorted
  std::vector<std::string> kernels;         // distinct cases.kernel_release, sorted
  std::vector<std::string> case_commits;    // distinct cases.source_commit (+"-dirty"), sorted
  /// The DB was written by the synthetic generator (analysis/simulate/synthetic.hpp: campaign_meta key
  /// `synthetic`, or a case whose source_commit is "synthetic"): no case ran, its accelerator,
  /// kernel and numbers are invented. Every artifact made from it says so on its first line
  /// (synthetic_banner).
  bool synthetic = false;
};

/// The first line's words of every report, summary and JUnit file made from a synthetic DB
/// (ours, issue 59): "SYNTHETIC DATA: made from a synthetic DB (analysis/simulate/synthetic.hpp), not
/// from cases that ran; its accelerator, kernel and numbers are invented". No newline.
std::string synthetic_banner();

/// Whether `db` was written by the synthetic generator (Provenance::synthetic). Errors:
/// results::DbError on SQLite failure.
bool is_synthetic_db(Db& db);

/// Reads campaign name/kind/plan hash and the distinct accelerators, kernels and case
/// commits from `db` (any of them may be absent: older DBs, case DBs), stamps the current
/// UTC time. Errors: results::DbError on SQLite failure.
Provenance collect_provenance(Db& db, const BuildId& build, const std::string& command_line);

/// JSON object text with the fields above (keys as the member names; build as
/// harness_version, source_commit, source_dirty). Stable key order.
std::string provenance_json(const Provenance& p);

/// Markdown block (a short bullet list, no heading) for the top of report.md and the
/// `harness check` summary. A synthetic DB's "Cases ran on" line says that no case ran.
std::string provenance_markdown(const Provenance& p);

/// Writes `<artifact>.meta.json` next to an artifact (e.g. table4.csv ->
/// table4.csv.meta.json) holding provenance_json plus {"artifact": file name}.
/// Errors: std::runtime_error naming the path when it cannot be written.
void write_sidecar(const std::string& artifact_path, const Provenance& p);

}  // namespace results
