// cases (see cases.hpp).
#include "results/store/cases.hpp"

#include "results/store/columns.hpp"

namespace results {
namespace {

using store_columns::Column;
using store_columns::Presence;

/// cases' columns in schema.sql order, case_key left out.
const std::vector<Column<CaseRow>>& case_columns() {
  static const std::vector<Column<CaseRow>> cols = {
      {"case_id", &CaseRow::case_id},
      {"campaign", &CaseRow::campaign},
      {"vm", &CaseRow::vm},
      {"regime", &CaseRow::regime},
      {"repeat", &CaseRow::repeat},
      {"triplet_id", &CaseRow::triplet_id},
      {"configuration", &CaseRow::configuration},
      {"dose_bytes", &CaseRow::dose_bytes},
      {"attempt", &CaseRow::attempt},
      {"status", &CaseRow::status},
      {"error", &CaseRow::error},
      {"accelerator", &CaseRow::accelerator},
      {"kernel_release", &CaseRow::kernel_release},
      {"source_commit", &CaseRow::source_commit},
      {"source_dirty", &CaseRow::source_dirty},
      {"page_size_bytes", &CaseRow::page_size_bytes},
      {"started_unix_ns", &CaseRow::started_unix_ns},
      {"ended_unix_ns", &CaseRow::ended_unix_ns},
      {"spec_json", &CaseRow::spec_json},
      {"environment_json", &CaseRow::environment_json, Presence::added},
      {"qualification_json", &CaseRow::qualification_json, Presence::added},
      {"outcome_json", &CaseRow::outcome_json},
      {"host_uri", &CaseRow::host_uri, Presence::added},
      {"overcommitted", &CaseRow::overcommitted, Presence::added},
      {"engine_kind", &CaseRow::engine_kind, Presence::added}};
  return cols;
}

/// "SELECT <the columns> FROM main.cases c " (alias c).
std::string select_cases(Db& db) {
  return "SELECT " + store_columns::select_list(db, "cases", case_columns(), "c.") + " FROM main.cases c ";
}

/// Every row `q` gives, as CaseRow from its first columns.
std::vector<CaseRow> case_rows(Stmt& q) {
  std::vector<CaseRow> out;
  while (q.step()) store_columns::read_row(q, 0, case_columns(), out.emplace_back());
  return out;
}

}  // namespace

CaseReader::CaseReader(Db& db) : select_(db, select_cases(db) + "WHERE c.case_id = ?1") {}

std::optional<CaseRow> CaseReader::get(const std::string& case_id) {
  select_.reset();
  select_.bind(1, case_id);
  if (!select_.step()) return std::nullopt;
  CaseRow c;
  store_columns::read_row(select_, 0, case_columns(), c);
  return c;
}

std::optional<CaseRow> read_case(Db& db, const std::string& case_id) { return CaseReader(db).get(case_id); }

std::optional<CaseRow> first_case(Db& db) {
  Stmt q(db, select_cases(db));
  if (!q.step()) return std::nullopt;
  CaseRow c;
  store_columns::read_row(q, 0, case_columns(), c);
  return c;
}

std::vector<CaseRow> completed_dosed_cases(Db& db, const std::string& configuration) {
  Stmt q(db, select_cases(db) +
                 "WHERE c.status = 'completed' AND c.configuration = ?1 AND c.dose_bytes IS NOT NULL "
                 "ORDER BY c.dose_bytes, c.case_id");
  q.bind(1, configuration);
  return case_rows(q);
}

std::vector<VariantCase> completed_variant_cases(Db& db, const std::string& variant) {
  const std::string host =
      "(SELECT a.host FROM main.attempts a WHERE a.case_id = c.case_id AND a.attempt = c.attempt "
      "ORDER BY a.rowid DESC LIMIT 1)";
  Stmt q(db, "SELECT " + store_columns::select_list(db, "cases", case_columns(), "c.") + ", " + host +
                 " FROM main.cases c WHERE c.status = 'completed' AND json_extract(c.spec_json, '$.variant.name') = ?1 "
                 "ORDER BY c.case_id");
  q.bind(1, variant);
  std::vector<VariantCase> out;
  const int host_col = static_cast<int>(case_columns().size());
  while (q.step()) {
    auto& v = out.emplace_back();
    store_columns::read_row(q, 0, case_columns(), v.c);
    v.attempt_host = q.opt_text(host_col);
  }
  return out;
}

std::int64_t insert_case(Db& db, const CaseRow& c) {
  Stmt q(db, store_columns::insert_sql("main.cases", {}, case_columns()));
  store_columns::bind_row(q, 1, case_columns(), c);
  q.run();
  return db.last_insert_rowid();
}

void delete_case(Db& db, const std::string& case_id) {
  Stmt q(db, "DELETE FROM main.cases WHERE case_id = ?1");
  q.bind(1, case_id).run();
}

void set_case_attempt(Db& db, const std::string& case_id, std::int64_t attempt) {
  Stmt q(db, "UPDATE main.cases SET attempt = ?2 WHERE case_id = ?1");
  q.bind(1, case_id).bind(2, attempt).run();
}

void fill_case_source(Db& db, const std::string& case_id, const std::optional<std::string>& commit,
                      const std::optional<std::int64_t>& dirty) {
  Stmt q(db,
         "UPDATE main.cases SET source_commit = coalesce(source_commit, ?2), "
         "source_dirty = coalesce(source_dirty, ?3) WHERE case_id = ?1");
  q.bind_all(case_id, commit, dirty).run();
}

void set_case_accelerator(Db& db, const std::string& case_id, const std::string& accelerator) {
  Stmt q(db, "UPDATE main.cases SET accelerator = ?2 WHERE case_id = ?1");
  q.bind(1, case_id).bind(2, accelerator).run();
}

void set_case_placement(Db& db, const std::string& case_id, const std::optional<std::string>& host_uri,
                        const std::optional<std::int64_t>& overcommitted, const std::optional<std::string>& engine_kind) {
  Stmt q(db, "UPDATE main.cases SET host_uri = ?2, overcommitted = ?3, engine_kind = ?4 WHERE case_id = ?1");
  q.bind_all(case_id, host_uri, overcommitted, engine_kind).run();
}

void set_case_status(Db& db, const std::string& case_id, const std::string& status, const std::string& error) {
  Stmt q(db, "UPDATE main.cases SET status = ?3, error = ?2 WHERE case_id = ?1");
  q.bind(1, case_id).bind(2, error).bind(3, status).run();
}

}  // namespace results
