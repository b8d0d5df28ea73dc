// phases (see phases.hpp).
#include "results/store/phases.hpp"

namespace results {

std::vector<PhaseRow> read_phases(Db& db, const std::string& case_id) {
  Stmt q(db, "SELECT phase, start_ns, end_ns FROM phases WHERE case_id = ?1");
  q.bind(1, case_id);
  std::vector<PhaseRow> out;
  while (q.step()) out.push_back({q.text(0), q.int64(1), q.opt_int64(2)});
  return out;
}

std::optional<PhaseRow> read_phase(Db& db, const std::string& case_id, const std::string& phase) {
  Stmt q(db, "SELECT start_ns, end_ns FROM phases WHERE case_id = ?1 AND phase = ?2");
  q.bind(1, case_id).bind(2, phase);
  if (!q.step()) return std::nullopt;
  return PhaseRow{phase, q.int64(0), q.opt_int64(1)};
}

void insert_phases(Db& db, const std::string& case_id, const std::vector<PhaseRow>& phases) {
  Stmt q(db, "INSERT INTO phases(case_id, phase, start_ns, end_ns) VALUES (?1, ?2, ?3, ?4)");
  for (const auto& p : phases) q.bind_all(case_id, p.phase, p.start_ns, p.end_ns).run();
}

}  // namespace results
