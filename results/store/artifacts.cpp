// artifacts (see artifacts.hpp).
#include "results/store/artifacts.hpp"

namespace results {

std::optional<std::string> read_artifact(Db& db, const std::string& case_id, const std::string& name) {
  if (!has_table(db, "artifacts")) return std::nullopt;
  Stmt q(db, "SELECT content FROM artifacts WHERE case_id = ?1 AND name = ?2");
  q.bind(1, case_id).bind(2, name);
  if (!q.step()) return std::nullopt;
  return q.opt_text(0);
}

void insert_artifacts(Db& db, const std::string& case_id,
                      const std::vector<std::pair<std::string, std::string>>& artifacts) {
  Stmt q(db, "INSERT INTO artifacts(case_id, name, content) VALUES (?1, ?2, ?3)");
  for (const auto& [name, content] : artifacts) q.bind_all(case_id, name, content).run();
}

}  // namespace results
