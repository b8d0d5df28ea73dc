#include "results/db.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace results {
namespace {
// The per-case tables keyed by the case id (schema.sql), cases aside. With kCaseKeyedTables
// they are every table whose rows reference cases: import_bundle deletes an earlier attempt's
// rows from them itself (foreign keys are off during the copy, so nothing cascades).
constexpr const char* kCaseIdTables[] = {"phases", "reclaim_actions", "restoration", "artifacts"};

/// Whether `db` enforces foreign keys now (PRAGMA foreign_keys).
bool foreign_keys_on(Db& db) {
  Stmt q(db, "PRAGMA foreign_keys");
  return q.step() && q.int64(0) != 0;
}

/// Whether the attached bundle has a table (not a view) `name`.
bool bundle_has_table(Db& db, const std::string& name) {
  Stmt q(db, "SELECT 1 FROM bundle.sqlite_master WHERE type = 'table' AND name = ?1");
  q.bind(1, name);
  return q.step();
}

/// The columns of main.`to` that bundle.`from` has too, in main's order, case_key left out (the
/// campaign DB assigns its own). Two plain PRAGMA reads: the former join of two
/// pragma_table_info() table-valued functions ran the inner PRAGMA again for every column.
std::vector<std::string> shared_columns(Db& campaign, const std::string& to, const std::string& from) {
  const std::vector<std::string> theirs = table_columns(campaign, "bundle", from);
  std::vector<std::string> shared;
  for (auto& name : table_columns(campaign, "main", to))
    if (name != "case_key" && std::find(theirs.begin(), theirs.end(), name) != theirs.end())
      shared.push_back(std::move(name));
  return shared;
}

/// INSERT INTO main.`to` (columns) SELECT (values) FROM bundle.`from` WHERE `where`, over the
/// columns both have; a column named in `written` is written as the given SQL expression
/// (a parameter) instead of read from the bundle, and is written even when the bundle lacks it.
std::string copy_sql(Db& campaign, const std::string& to, const std::string& from, const std::string& where,
                     const std::vector<std::pair<std::string, std::string>>& written) {
  std::string cols, values;
  auto add = [&](const std::string& col, const std::string& value) {
    const char* sep = cols.empty() ? "" : ", ";
    cols += sep + ("\"" + col + "\"");
    values += sep + value;
  };
  for (const auto& [col, value] : written) add(col, value);
  for (const std::string& name : shared_columns(campaign, to, from))
    if (std::none_of(written.begin(), written.end(), [&](const auto& w) { return w.first == name; }))
      add(name, "\"" + name + "\"");
  return "INSERT INTO main." + to + " (" + cols + ") SELECT " + values + " FROM bundle." + from + " WHERE " + where;
}

// import_bundle's steps, in its order: attach, check the bundle, then in one transaction
// replace an earlier attempt and copy the case.

/// ATTACHes `bundle_path` (an existing file) as `bundle`.
void attach_bundle(Db& campaign, const std::string& bundle_path) {
  Stmt attach(campaign, "ATTACH DATABASE ?1 AS bundle");
  attach.bind(1, bundle_path);
  try {
    attach.run();
  } catch (const DbError&) {
    throw DbError(bundle_path + ": cannot attach the bundle: " + sqlite3_errmsg(campaign.handle()));
  }
}

/// Refuses an attached bundle that is not a results DB (schema_version) holding exactly one case `from`.
void check_bundle_holds_case(Db& campaign, const std::string& bundle_path, const std::string& from) {
  // The bundle is checked through the attached schema (formerly a second connection of its
  // own, opened and closed per import).
  std::optional<Stmt> v;
  try {
    v.emplace(campaign, "SELECT value FROM bundle.schema_info WHERE key = 'schema_version'");
  } catch (const DbError&) {
    throw DbError(bundle_path + ": not a harness results database (" + sqlite3_errmsg(campaign.handle()) + ")");
  }
  if (!v->step()) throw DbError(bundle_path + ": not a harness results database (no schema_version)");
  Stmt s(campaign, "SELECT count(*) FROM bundle.cases WHERE case_id = ?1");
  s.bind(1, from);
  if (!s.step() || s.int64(0) != 1) throw DbError(bundle_path + ": bundle holds no case '" + from + "'");
}

/// Schema version 6: a campaign DB whose arms table has rows takes only cases of those arms.
/// schema.sql's trigger refuses any other with a fixed message; this one names the arm.
void check_case_arm(Db& campaign, const std::string& bundle_path, const std::string& from) {
  if (!has_table(campaign, "arms")) return;
  Stmt a(campaign,
         "SELECT c.configuration, (SELECT group_concat(name, ', ') FROM (SELECT name FROM main.arms ORDER BY "
         "position, name)) FROM bundle.cases c WHERE c.case_id = ?1 AND EXISTS (SELECT 1 FROM main.arms) AND "
         "NOT EXISTS (SELECT 1 FROM main.arms a WHERE a.name = c.configuration)");
  a.bind(1, from);
  if (a.step())
    throw DbError(bundle_path + ": case '" + from + "' ran arm '" + a.text(0) + "', which is no arm of " +
                  campaign.path() + " (its arms: " + a.text(1) + ")");
}

/// The bundle's own key of case `from`: a bundle of schema version 5 or later stores the large
/// tables under it (<name>_rows); an earlier one stores them by case id in tables of the plain
/// name (nullopt).
std::optional<std::int64_t> bundle_case_key(Db& campaign, const std::string& from) {
  if (!bundle_has_table(campaign, std::string(kCaseKeyedTables[0]) + "_rows")) return std::nullopt;
  Stmt k(campaign, "SELECT case_key FROM bundle.cases WHERE case_id = ?1");
  k.bind(1, from);
  if (k.step()) return k.int64(0);
  return std::nullopt;
}

/// An earlier attempt's rows of `case_id`, removed: its rows in every per-case table (as ON
/// DELETE CASCADE would), then its cases row.
void delete_earlier_attempt(Db& campaign, const std::string& case_id) {
  std::optional<std::int64_t> old_key;
  {
    Stmt old(campaign, "SELECT case_key FROM main.cases WHERE case_id = ?1");
    old.bind(1, case_id);
    if (old.step()) old_key = old.int64(0);
  }
  if (!old_key) return;
  for (const char* table : kCaseKeyedTables) {
    Stmt del(campaign, std::string("DELETE FROM main.") + table + "_rows WHERE case_key = ?1");
    del.bind(1, *old_key).run();
  }
  for (const char* table : kCaseIdTables) {
    Stmt del(campaign, std::string("DELETE FROM main.") + table + " WHERE case_id = ?1");
    del.bind(1, case_id).run();
  }
  Stmt del(campaign, "DELETE FROM main.cases WHERE case_key = ?1");
  del.bind(1, *old_key).run();
}

/// Copies bundle case `from` as `case_id` (cases row, case-id tables, case-keyed tables; the
/// bundle's key `bundle_key` when it has one); returns the canary_requests rows written.
std::int64_t copy_case(Db& campaign, const std::string& from, const std::string& case_id,
                       std::optional<std::int64_t> bundle_key) {
  // By column name, the columns both have: a bundle of an earlier schema version (an older
  // agent) lacks the columns added since; they stay NULL (never invented). The case id is
  // written as ?2 (the campaign's id) and the case key as ?3 (the campaign's): no UPDATE
  // of the bundle. cases first: its new key is the one the large tables' rows take.
  {
    Stmt ins(campaign, copy_sql(campaign, "cases", "cases", "case_id = ?1", {{"case_id", "?2"}}));
    ins.bind(1, from).bind(2, case_id).run();
  }
  const std::int64_t key = campaign.last_insert_rowid();
  for (const char* table : kCaseIdTables) {
    Stmt ins(campaign, copy_sql(campaign, table, table, "case_id = ?1", {{"case_id", "?2"}}));
    ins.bind(1, from).bind(2, case_id).run();
  }
  std::int64_t requests = 0;
  for (const char* table : kCaseKeyedTables) {
    const std::string rows = std::string(table) + "_rows";
    // Read in the bundle's key order, appended at the end of the campaign DB's b-tree.
    const bool keyed = bundle_key && bundle_has_table(campaign, rows);
    Stmt ins(campaign, copy_sql(campaign, rows, keyed ? rows : table, keyed ? "case_key = ?1" : "case_id = ?1",
                                {{"case_key", "?3"}}));
    if (keyed)
      ins.bind(1, *bundle_key);
    else
      ins.bind(1, from);
    ins.bind(3, key).run();
    // The case's earlier rows were deleted before, so the rows this INSERT wrote are all it has.
    if (std::string_view(table) == "canary_requests") requests = sqlite3_changes(campaign.handle());
  }
  return requests;
}
}  // namespace

std::int64_t import_bundle(Db& campaign, const std::string& bundle_path, const std::string& case_id,
                           const std::function<void(Db&)>& in_transaction, const std::string& bundle_case_id) {
  const std::string& from = bundle_case_id.empty() ? case_id : bundle_case_id;
  // ATTACH would create a missing file: refuse it first, as opening it would.
  if (!std::filesystem::exists(bundle_path)) throw DbError(bundle_path + ": no such database file");
  // Foreign keys are not enforced during the copy: checking every copied row's case against
  // cases (one index seek per row) proves nothing here, since the cases row is copied first and
  // every row is written under its id or key. PRAGMA foreign_keys is a no-op inside a
  // transaction, hence around it; restored afterwards.
  const bool foreign_keys = foreign_keys_on(campaign);
  attach_bundle(campaign, bundle_path);
  std::int64_t requests = 0;
  try {
    check_bundle_holds_case(campaign, bundle_path, from);
    check_case_arm(campaign, bundle_path, from);
    const std::optional<std::int64_t> bundle_key = bundle_case_key(campaign, from);
    if (foreign_keys) campaign.exec("PRAGMA foreign_keys = OFF");
    campaign.transaction([&] {
      delete_earlier_attempt(campaign, case_id);
      requests = copy_case(campaign, from, case_id, bundle_key);
      if (in_transaction) in_transaction(campaign);
    });
  } catch (...) {
    if (foreign_keys) campaign.exec("PRAGMA foreign_keys = ON");
    campaign.exec("DETACH DATABASE bundle");
    throw;
  }
  if (foreign_keys) campaign.exec("PRAGMA foreign_keys = ON");
  campaign.exec("DETACH DATABASE bundle");
  return requests;
}

}  // namespace results
