// attempts (see attempts.hpp).
#include "results/store/attempts.hpp"

#include "results/store/columns.hpp"

namespace results {
namespace {

using store_columns::Column;
using store_columns::Presence;

/// attempts' columns in schema.sql order; kind and detail_json came after the first version.
const std::vector<Column<AttemptRow>>& attempt_columns() {
  static const std::vector<Column<AttemptRow>> cols = {
      {"case_id", &AttemptRow::case_id},
      {"attempt", &AttemptRow::attempt},
      {"host", &AttemptRow::host},
      {"status", &AttemptRow::status},
      {"error", &AttemptRow::error},
      {"started_unix_ns", &AttemptRow::started_unix_ns},
      {"ended_unix_ns", &AttemptRow::ended_unix_ns},
      {"kind", &AttemptRow::kind, Presence::added},
      {"detail_json", &AttemptRow::detail_json, Presence::added}};
  return cols;
}

/// The rows `where_order` (e.g. "WHERE case_id = ?1 ORDER BY attempt") selects, ?1 bound to `arg`
/// when not empty.
std::vector<AttemptRow> attempt_rows(Db& db, const std::string& where_order, const std::string& arg = "") {
  Stmt q(db, "SELECT " + store_columns::select_list(db, "attempts", attempt_columns()) + " FROM attempts " + where_order);
  if (!arg.empty()) q.bind(1, arg);
  std::vector<AttemptRow> out;
  while (q.step()) {
    AttemptRow a;
    store_columns::read_row(q, 0, attempt_columns(), a);
    if (q.is_null(7)) a.kind = "run";  // a file before the column
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

std::vector<AttemptRow> read_attempts(Db& db) {
  if (!has_table(db, "attempts")) return {};
  return attempt_rows(db, "ORDER BY case_id, attempt");
}

std::vector<AttemptRow> read_case_attempts(Db& db, const std::string& case_id) {
  return attempt_rows(db, "WHERE case_id = ?1 ORDER BY attempt", case_id);
}

std::optional<AttemptRow> latest_attempt_with_status(Db& db, const std::string& case_id, const std::string& status) {
  Stmt q(db,
         "SELECT attempt, host, started_unix_ns, kind, detail_json FROM attempts "
         "WHERE case_id = ?1 AND status = ?2 ORDER BY attempt DESC LIMIT 1");
  q.bind(1, case_id).bind(2, status);
  if (!q.step()) return std::nullopt;
  AttemptRow a;
  a.case_id = case_id;
  a.attempt = q.int64(0);
  a.host = q.opt_text(1);
  a.status = status;
  a.started_unix_ns = q.opt_int64(2);
  a.kind = q.text(3);
  a.detail_json = q.opt_text(4);
  return a;
}

std::optional<std::string> last_attempt_error(Db& db, const std::string& case_id) {
  Stmt q(db, "SELECT error FROM attempts WHERE case_id = ?1 ORDER BY attempt DESC LIMIT 1");
  q.bind(1, case_id);
  if (!q.step()) return std::nullopt;
  return q.opt_text(0);
}

void insert_attempt(Db& db, const AttemptRow& a) {
  Stmt q(db, store_columns::insert_sql("attempts", {}, attempt_columns()));
  store_columns::bind_row(q, 1, attempt_columns(), a);
  q.run();
}

void replace_attempt(Db& db, const AttemptRow& a) {
  Stmt q(db, store_columns::insert_sql("attempts", {}, attempt_columns(), true));
  store_columns::bind_row(q, 1, attempt_columns(), a);
  q.run();
}

void update_attempt_detail(Db& db, const AttemptRow& a, const std::string& status) {
  Stmt q(db,
         "UPDATE attempts SET detail_json = ?3, kind = ?4, host = ?5 WHERE case_id = ?1 AND attempt = ?2 "
         "AND status = ?6");
  q.bind_all(a.case_id, a.attempt, a.detail_json, a.kind, a.host, status);
  q.run();
}

}  // namespace results
