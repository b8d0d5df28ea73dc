// The status report's views of attempts (see attempt_views.hpp).
#include "results/store/attempt_views.hpp"

namespace results {

AttemptSpan attempt_span(Db& db, const std::string& running_status) {
  Stmt q(db, "SELECT min(started_unix_ns), max(ended_unix_ns), sum(status = ?1) FROM attempts "
             "WHERE kind NOT IN ('mark-infra', 'reset-infra') AND started_unix_ns IS NOT NULL");
  q.bind(1, running_status);
  AttemptSpan s;
  if (!q.step()) return s;
  s.first_started_unix_ns = q.opt_int64(0);
  s.last_ended_unix_ns = q.opt_int64(1);
  s.in_flight = q.opt_int64(2).value_or(0);
  return s;
}

FinishedAttempts finished_attempts(Db& db, const std::string& completed, const std::string& lost) {
  Stmt q(db, "SELECT avg(a.ended_unix_ns - a.started_unix_ns), count(*) FROM schedule s JOIN attempts a "
             "ON a.case_id = s.case_id AND a.status = s.state WHERE s.state IN (?1, ?2) AND "
             "a.ended_unix_ns IS NOT NULL AND a.attempt = (SELECT max(b.attempt) FROM attempts b WHERE "
             "b.case_id = s.case_id AND b.status = s.state)");
  q.bind(1, completed).bind(2, lost);
  FinishedAttempts f;
  if (!q.step()) return f;
  f.count = q.opt_int64(1).value_or(0);
  f.mean_ns = q.opt_int64(0);
  return f;
}

std::vector<InFlightAttempt> in_flight_attempts(Db& db, const std::string& running_status) {
  Stmt q(db, "SELECT case_id, attempt, json_extract(detail_json, '$.phase'), "
             "json_extract(detail_json, '$.runner_pid') FROM attempts WHERE status = ?1 "
             "ORDER BY case_id");
  q.bind(1, running_status);
  std::vector<InFlightAttempt> out;
  while (q.step()) out.push_back({q.text(0), q.int64(1), q.opt_text(2), q.opt_text(3)});
  return out;
}

std::vector<AdoptedAttempt> adopted_attempts(Db& db, const std::string& running_status) {
  Stmt q(db, "SELECT case_id, attempt, status, json_array_length(detail_json, '$.takeovers') FROM attempts "
             "WHERE kind = 'adopted' AND status != ?1 ORDER BY case_id");
  q.bind(1, running_status);
  std::vector<AdoptedAttempt> out;
  while (q.step()) out.push_back({q.text(0), q.int64(1), q.text(2), q.opt_int64(3)});
  return out;
}

std::vector<OperatorAction> operator_actions(Db& db, const std::string& kind) {
  Stmt q(db, "SELECT case_id, attempt, detail_json, json_extract(detail_json, '$.operator'), "
             "json_extract(detail_json, '$.reason') FROM attempts WHERE kind = ?1 "
             "ORDER BY ended_unix_ns, case_id");
  q.bind(1, kind);
  std::vector<OperatorAction> out;
  while (q.step()) out.push_back({q.text(0), q.int64(1), q.opt_text(2), q.opt_text(3), q.opt_text(4)});
  return out;
}

std::vector<std::string> started_case_ids(Db& db, const std::string& pending_state) {
  Stmt q(db, "SELECT case_id FROM attempts UNION SELECT case_id FROM schedule WHERE state != ?1");
  q.bind(1, pending_state);
  std::vector<std::string> out;
  while (q.step()) out.push_back(q.text(0));
  return out;
}

std::int64_t attempt_count(Db& db) {
  Stmt q(db, "SELECT count(*) FROM attempts");
  q.step();
  return q.int64(0);
}

}  // namespace results

