// arms (see arms.hpp).
#include "results/store/arms.hpp"

namespace results {

std::vector<ArmRow> read_arms(Db& db) {
  std::vector<ArmRow> out;
  if (!has_table(db, "arms")) return out;
  Stmt q(db, "SELECT name, policy, params_json, sha256, position FROM arms ORDER BY position, name");
  while (q.step())
    out.push_back({q.text(0), q.opt_text(1).value_or(""), q.opt_text(2).value_or(""), q.opt_text(3).value_or(""),
                   q.int64(4)});
  return out;
}

void insert_arms(Db& db, const std::vector<ArmRow>& arms) {
  Stmt q(db, "INSERT INTO arms(name, policy, params_json, sha256, position) VALUES (?1, ?2, ?3, ?4, ?5)");
  for (const auto& a : arms) q.bind_all(a.name, a.policy, a.params_json, a.sha256, a.position).run();
}

}  // namespace results
