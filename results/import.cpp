#include "results/db.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <string_view>
#include <vector>

namespace results {
namespace {
// Tables that hold per-case rows, in foreign-key order (cases first).
constexpr const char* kCaseTables[] = {"cases",           "phases",          "canary_requests",
                                       "telemetry",       "controller_events", "reclaim_actions",
                                       "restoration",     "artifacts"};

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
  {
    Db bundle(bundle_path, Db::Mode::ReadOnly);  // validates it is a results DB
    Stmt s(bundle, "SELECT count(*) FROM cases WHERE case_id = ?1");
    s.bind(1, from);
    if (!s.step() || s.int64(0) != 1)
      throw DbError(bundle_path + ": bundle holds no case '" + from + "'");
  }
  {
    Stmt attach(campaign, "ATTACH DATABASE ?1 AS bundle");
    attach.bind(1, bundle_path);
    attach.run();
  }
  std::int64_t requests = 0;
  try {
    campaign.transaction([&] {
      // Deleting the case cascades to its child rows (earlier attempt replaced).
      Stmt del(campaign, "DELETE FROM main.cases WHERE case_id = ?1");
      del.bind(1, case_id);
      del.run();
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
    campaign.exec("DETACH DATABASE bundle");
    throw;
  }
  campaign.exec("DETACH DATABASE bundle");
  return requests;
}

}  // namespace results
