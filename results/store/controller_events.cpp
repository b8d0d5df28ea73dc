// controller_events (see controller_events.hpp).
#include "results/store/controller_events.hpp"

namespace results {

std::optional<std::int64_t> first_event_ns(Db& db, const std::string& case_id, const std::vector<std::string>& kinds) {
  std::string in;
  for (std::size_t i = 0; i < kinds.size(); ++i) in += (i ? ", ?" : "?") + std::to_string(i + 2);
  Stmt q(db, "SELECT MIN(t_ns) FROM controller_events WHERE case_id = ?1 AND kind IN (" + in + ")");
  q.bind(1, case_id);
  for (std::size_t i = 0; i < kinds.size(); ++i) q.bind(static_cast<int>(i + 2), kinds[i]);
  if (!q.step()) return std::nullopt;
  return q.opt_int64(0);
}

std::vector<EventKindSummary> event_kind_summaries(Db& db, const std::string& case_id,
                                                   const std::vector<std::string>& kinds) {
  std::string in;
  for (std::size_t i = 0; i < kinds.size(); ++i) in += (i ? ", ?" : "?") + std::to_string(i + 2);
  Stmt q(db, "SELECT kind, COUNT(*), MIN(t_ns) FROM controller_events WHERE case_id = ?1 AND kind IN (" + in +
                 ") GROUP BY kind");
  q.bind(1, case_id);
  for (std::size_t i = 0; i < kinds.size(); ++i) q.bind(static_cast<int>(i + 2), kinds[i]);
  std::vector<EventKindSummary> out;
  while (q.step()) out.push_back({q.text(0), q.int64(1), q.int64(2)});
  return out;
}

std::vector<ControllerEventRow> events_of_kind(Db& db, const std::string& case_id, const std::string& kind) {
  Stmt q(db, "SELECT t_ns, detail_json FROM controller_events WHERE case_id = ?1 AND kind = ?2 ORDER BY t_ns");
  q.bind(1, case_id).bind(2, kind);
  std::vector<ControllerEventRow> out;
  while (q.step()) {
    auto& e = out.emplace_back();
    e.t_ns = q.int64(0);
    e.kind = kind;
    e.detail_json = q.opt_text(1);
  }
  return out;
}

std::vector<ControllerEventRow> events_except_kind(Db& db, const std::string& case_id, const std::string& kind) {
  Stmt q(db, "SELECT t_ns, kind FROM controller_events WHERE case_id = ?1 AND kind <> ?2 ORDER BY t_ns");
  q.bind(1, case_id).bind(2, kind);
  std::vector<ControllerEventRow> out;
  while (q.step()) {
    auto& e = out.emplace_back();
    e.t_ns = q.int64(0);
    e.kind = q.text(1);
  }
  return out;
}

std::int64_t count_events(Db& db, const std::string& case_id, const std::string& kind) {
  Stmt q(db, "SELECT COUNT(*) FROM controller_events WHERE case_id = ?1 AND kind = ?2");
  q.bind(1, case_id).bind(2, kind);
  q.step();
  return q.int64(0);
}

std::optional<WindowCounts> window_counts(Db& db, const std::string& case_id) {
  if (!has_column(db, "controller_events", "irregular")) return std::nullopt;
  Stmt q(db, "SELECT COUNT(irregular), COALESCE(SUM(irregular = 1), 0) FROM controller_events "
             "WHERE case_id = ?1 AND kind = 'window'");
  q.bind(1, case_id);
  if (!q.step() || q.int64(0) == 0) return std::nullopt;
  return WindowCounts{q.int64(0), q.int64(1)};
}

ControllerEventWriter::ControllerEventWriter(Db& db, std::int64_t case_key)
    : insert_(db,
              "INSERT INTO controller_events_rows(case_key, t_ns, kind, some_total_us, delta_us, counting, "
              "consecutive, detail_json, window_ns, irregular) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
      key_(case_key) {}

void ControllerEventWriter::write(const ControllerEventRow& e) {
  insert_.bind_all(key_, e.t_ns, e.kind, e.some_total_us, e.delta_us, e.counting, e.consecutive, e.detail_json,
                   e.window_ns, e.irregular)
      .run();
}

}  // namespace results
