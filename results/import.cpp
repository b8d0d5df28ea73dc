#include "results/db.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace results {
namespace {
// Tables that hold per-case rows, in foreign-key order (cases first). Every table whose rows
// reference cases(case_id) must be here: import_bundle deletes an earlier attempt's rows from
// these tables itself (foreign keys are off during the copy, so nothing cascades).
constexpr const char* kCaseTables[] = {"cases",           "phases",          "canary_requests",
                                       "telemetry",       "controller_events", "reclaim_actions",
                                       "restoration",     "artifacts"};

/// Whether `db` enforces foreign keys now (PRAGMA foreign_keys).
bool foreign_keys_on(Db& db) {
  Stmt q(db, "PRAGMA foreign_keys");
  return q.step() && q.int64(0) != 0;
}

/// The column names of `schema`.`table`, in declaration order (PRAGMA table_info); empty when
/// the table does not exist there.
std::vector<std::string> table_columns(Db& db, const char* schema, const char* table) {
  Stmt q(db, std::string("PRAGMA \"") + schema + "\".table_info(\"" + table + "\")");
  std::vector<std::string> names;
  while (q.step()) names.push_back(q.text(1));
  return names;
}

/// The columns of `table` both the bundle and the campaign DB have, in the bundle's column
/// order. Two plain PRAGMA reads: the former join of two pragma_table_info() table-valued
/// functions ran the inner PRAGMA again (prepared anew) for every column of the outer one.
std::vector<std::string> shared_columns(Db& campaign, const char* table) {
  const std::vector<std::string> mine = table_columns(campaign, "main", table);
  std::vector<std::string> shared;
  for (auto& name : table_columns(campaign, "bundle", table))
    if (std::find(mine.begin(), mine.end(), name) != mine.end()) shared.push_back(std::move(name));
  return shared;
}
}  // namespace

std::int64_t import_bundle(Db& campaign, const std::string& bundle_path, const std::string& case_id,
                           const std::function<void(Db&)>& in_transaction, const std::string& bundle_case_id) {
  const std::string& from = bundle_case_id.empty() ? case_id : bundle_case_id;
  // ATTACH would create a missing file: refuse it first, as opening it would.
  if (!std::filesystem::exists(bundle_path)) throw DbError(bundle_path + ": no such database file");
  // Foreign keys are not enforced during the copy: checking every copied row's case_id
  // against cases (one index seek per row, ~12% of the copy) proves nothing here, since the
  // cases row is copied first and every row is written under that same id (?2). PRAGMA
  // foreign_keys is a no-op inside a transaction, hence around it; restored afterwards.
  const bool foreign_keys = foreign_keys_on(campaign);
  {
    Stmt attach(campaign, "ATTACH DATABASE ?1 AS bundle");
    attach.bind(1, bundle_path);
    try {
      attach.run();
    } catch (const DbError&) {
      throw DbError(bundle_path + ": cannot attach the bundle: " + sqlite3_errmsg(campaign.handle()));
    }
  }
  std::int64_t requests = 0;
  try {
    // The bundle is checked through the attached schema (formerly a second connection of its
    // own, opened and closed per import): a results DB (schema_version) holding the case.
    {
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
    if (foreign_keys) campaign.exec("PRAGMA foreign_keys = OFF");
    campaign.transaction([&] {
      // An earlier attempt's rows are replaced: the case row, then (only when there was one,
      // as ON DELETE CASCADE would) its rows in the other tables.
      Stmt del(campaign, "DELETE FROM main.cases WHERE case_id = ?1");
      del.bind(1, case_id);
      del.run();
      if (sqlite3_changes(campaign.handle()) > 0)
        for (const char* table : kCaseTables)
          if (std::string_view(table) != "cases") {
            Stmt child(campaign, std::string("DELETE FROM main.") + table + " WHERE case_id = ?1");
            child.bind(1, case_id);
            child.run();
          }
      for (const char* table : kCaseTables) {
        // By column name, the columns both have: a bundle of an earlier schema version (an
        // older agent) lacks the columns added since; they stay NULL (never invented).
        // The case id column is written as ?2 (the campaign's id): no UPDATE of the bundle.
        std::string cols, values;
        for (const std::string& name : shared_columns(campaign, table)) {
          const char* sep = cols.empty() ? "" : ", ";
          cols += sep + ("\"" + name + "\"");
          values += sep + (name == "case_id" ? std::string("?2") : "\"" + name + "\"");
        }
        Stmt ins(campaign, std::string("INSERT INTO main.") + table + " (" + cols + ") SELECT " + values +
                               " FROM bundle." + table + " WHERE case_id = ?1");
        ins.bind(1, from).bind(2, case_id);
        ins.run();
        // The case's earlier rows were deleted above, so the rows this INSERT wrote are all it has.
        if (std::string_view(table) == "canary_requests") requests = sqlite3_changes(campaign.handle());
      }
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
