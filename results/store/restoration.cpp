// restoration (see restoration.hpp).
#include "results/store/restoration.hpp"

namespace results {

std::optional<RestorationRow> read_restoration(Db& db, const std::string& case_id) {
  if (!has_table(db, "restoration")) return std::nullopt;
  Stmt q(db, "SELECT start_ns, end_ns, clean, detail_json FROM restoration WHERE case_id = ?1");
  q.bind(1, case_id);
  if (!q.step()) return std::nullopt;
  return RestorationRow{q.int64(0), q.int64(1), q.int64(2), q.opt_text(3)};
}

void insert_restoration(Db& db, const std::string& case_id, const RestorationRow& r) {
  Stmt q(db, "INSERT INTO restoration(case_id, start_ns, end_ns, clean, detail_json) VALUES (?1, ?2, ?3, ?4, ?5)");
  q.bind_all(case_id, r.start_ns, r.end_ns, r.clean, r.detail_json).run();
}

}  // namespace results
