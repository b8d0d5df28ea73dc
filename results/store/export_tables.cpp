// The tables `harness export` writes (see export_tables.hpp).
#include "results/store/export_tables.hpp"

#include <stdexcept>
#include <utility>

namespace results {
namespace {

/// (name, query) of each exported table, in order. Where each case ran (schema version 3): a
/// file without those columns gives empty fields.
std::vector<std::pair<std::string, std::string>> export_queries(Db& db) {
  const std::string where = std::string(has_column(db, "cases", "host_uri") ? "host_uri" : "NULL AS host_uri") + ", " +
                            (has_column(db, "cases", "overcommitted") ? "overcommitted" : "NULL AS overcommitted");
  return {
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
}

}  // namespace

std::vector<std::string> export_table_names() {
  return {"schedule", "attempts", "cases", "phases", "canary_requests", "telemetry", "controller_events",
          "reclaim_actions", "restoration"};
}

void read_export_table(Db& db, const std::string& name,
                       const std::function<void(const std::vector<std::string>& columns)>& header,
                       const std::function<void(const std::vector<std::optional<std::string>>& cells)>& row) {
  std::string sql;
  for (auto& [n, s] : export_queries(db))
    if (n == name) sql = std::move(s);
  if (sql.empty()) throw std::invalid_argument("export: no table " + name);
  Stmt q(db, sql);
  std::vector<std::string> columns;
  for (int i = 0; i < q.columns(); ++i) columns.push_back(q.column_name(i));
  header(columns);
  std::vector<std::optional<std::string>> cells(columns.size());
  while (q.step()) {
    for (int i = 0; i < q.columns(); ++i) cells[static_cast<std::size_t>(i)] = q.opt_text(i);
    row(cells);
  }
}

}  // namespace results
