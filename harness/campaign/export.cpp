// CSV export of the campaign DB (see export.hpp).
#include "harness/campaign/export.hpp"

#include "results/db.hpp"
#include "results/csv.hpp"

#include <filesystem>
#include <fstream>
#include <utility>

namespace harness::campaign {

namespace {

using results::has_column;

}  // namespace

std::vector<std::string> export_csv(results::Db& db, const std::string& out_dir, const results::Provenance* provenance) {
  std::filesystem::create_directories(out_dir);
  // Where each case ran (schema version 3); an older DB has no such columns: empty fields.
  const std::string where = std::string(has_column(db, "cases", "host_uri") ? "host_uri" : "NULL AS host_uri") + ", " +
                            (has_column(db, "cases", "overcommitted") ? "overcommitted" : "NULL AS overcommitted");
  // Derived columns follow the study: wake delay = wake - scheduled, service = completion -
  // wake, response = completion - scheduled, deadline miss = completion > next scheduled start.
  const std::vector<std::pair<std::string, std::string>> tables = {
      {"schedule", "SELECT * FROM schedule ORDER BY ordinal"},
      {"attempts", "SELECT * FROM attempts ORDER BY case_id, attempt"},
      {"cases",
       "SELECT case_id, campaign, vm, regime, repeat, triplet_id, configuration, dose_bytes, attempt, status, "
       "error, accelerator, " + where + ", kernel_release, source_commit, page_size_bytes, started_unix_ns, "
       "ended_unix_ns, outcome_json FROM cases ORDER BY case_id"},
      {"phases", "SELECT * FROM phases ORDER BY case_id, start_ns"},
      {"canary_requests",
       "SELECT r.*, r.wake_ns - r.scheduled_ns AS wake_delay_ns, r.completion_ns - r.wake_ns AS service_ns, "
       "r.completion_ns - r.scheduled_ns AS response_ns, "
       "CASE WHEN r.completion_ns IS NULL THEN 1 "
       "WHEN r.completion_ns > r.scheduled_ns + c.period_ns THEN 1 ELSE 0 END AS deadline_miss, "
       "(SELECT p.phase FROM phases p WHERE p.case_id = r.case_id AND p.phase != 'restoration' AND "
       "r.scheduled_ns >= p.start_ns AND (p.end_ns IS NULL OR r.scheduled_ns < p.end_ns)) AS phase "
       "FROM canary_requests r JOIN (SELECT case_id, "
       "COALESCE(json_extract(spec_json, '$.canaries.period_ms'), 100) * 1000000 AS period_ns FROM cases) c "
       "USING(case_id) ORDER BY r.case_id, r.canary, r.seq"},
      {"telemetry", "SELECT * FROM telemetry ORDER BY case_id, t_ns"},
      {"controller_events", "SELECT * FROM controller_events ORDER BY case_id, t_ns"},
      {"reclaim_actions", "SELECT * FROM reclaim_actions ORDER BY case_id, start_ns"},
      {"restoration", "SELECT * FROM restoration ORDER BY case_id"},
  };
  std::vector<std::string> written;
  for (const auto& [name, sql] : tables) {
    const std::string path = (std::filesystem::path(out_dir) / (name + ".csv")).string();
    std::ofstream o(path);
    if (!o) throw std::runtime_error(path + ": cannot write");
    results::Stmt q(db, sql);
    bool header = false;
    while (q.step()) {
      if (!header) {
        for (int i = 0; i < q.columns(); ++i) o << (i ? "," : "") << results::csv_field(q.column_name(i));
        o << "\n";
        header = true;
      }
      for (int i = 0; i < q.columns(); ++i) {
        if (i) o << ',';
        if (!q.is_null(i)) o << results::csv_field(q.text(i));
      }
      o << "\n";
    }
    if (!header) {  // empty table: still write the header
      for (int i = 0; i < q.columns(); ++i) o << (i ? "," : "") << results::csv_field(q.column_name(i));
      o << "\n";
    }
    if (!o) throw std::runtime_error(path + ": write failed");
    if (provenance) results::write_sidecar(path, *provenance);
    written.push_back(path);
  }
  return written;
}

}  // namespace harness::campaign
