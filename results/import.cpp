#include "results/db.hpp"

namespace results {
namespace {
// Tables that hold per-case rows, in foreign-key order (cases first).
constexpr const char* kCaseTables[] = {"cases",           "phases",          "canary_requests",
                                       "telemetry",       "controller_events", "reclaim_actions",
                                       "restoration",     "artifacts"};
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
        Stmt q(campaign,
               "SELECT b.name FROM pragma_table_info(?1, 'bundle') b JOIN pragma_table_info(?1, 'main') m "
               "USING (name) ORDER BY b.cid");
        q.bind(1, std::string(table));
        while (q.step()) {
          const std::string name = q.text(0);
          const char* sep = cols.empty() ? "" : ", ";
          cols += sep + ("\"" + name + "\"");
          values += sep + (name == "case_id" ? std::string("?2") : "\"" + name + "\"");
        }
        Stmt ins(campaign, std::string("INSERT INTO main.") + table + " (" + cols + ") SELECT " + values +
                               " FROM bundle." + table + " WHERE case_id = ?1");
        ins.bind(1, from).bind(2, case_id);
        ins.run();
      }
      Stmt n(campaign, "SELECT count(*) FROM main.canary_requests WHERE case_id = ?1");
      n.bind(1, case_id);
      n.step();
      requests = n.int64(0);
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
