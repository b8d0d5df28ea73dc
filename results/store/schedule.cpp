// schedule (see schedule.hpp).
#include "results/store/schedule.hpp"

namespace results {

std::vector<ScheduleRow> read_schedule(Db& db) {
  std::vector<ScheduleRow> out;
  Stmt q(db,
         "SELECT case_id, ordinal, vm, regime, repeat, triplet_id, configuration, dose_bytes, state FROM schedule "
         "ORDER BY ordinal");
  while (q.step())
    out.push_back({q.text(0), q.int64(1), q.text(2), q.text(3), q.int64(4), q.opt_text(5), q.text(6), q.opt_int64(7),
                   q.text(8)});
  return out;
}

std::optional<std::string> schedule_state(Db& db, const std::string& case_id) {
  Stmt q(db, "SELECT state FROM schedule WHERE case_id = ?1");
  q.bind(1, case_id);
  if (!q.step()) return std::nullopt;
  return q.text(0);
}

void set_schedule_state(Db& db, const std::string& case_id, const std::string& state) {
  Stmt q(db, "UPDATE schedule SET state = ?2 WHERE case_id = ?1");
  q.bind(1, case_id).bind(2, state);
  q.run();
}

ScheduleWriter::ScheduleWriter(Db& db)
    : insert_(db,
              "INSERT INTO schedule(case_id, ordinal, vm, regime, repeat, triplet_id, configuration, dose_bytes, state) "
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)") {}

void ScheduleWriter::write(const ScheduleRow& r) {
  insert_.bind_all(r.case_id, r.ordinal, r.vm, r.regime, r.repeat, r.triplet_id, r.configuration, r.dose_bytes, r.state)
      .run();
}

}  // namespace results
