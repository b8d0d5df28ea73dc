// canary_requests (see canary_requests.hpp).
#include "results/store/canary_requests.hpp"

namespace results {

void for_each_canary_request(Db& db, const std::string& case_id, const std::string& canary,
                             const std::function<void(const CanaryRequestRow&)>& row) {
  Stmt q(db,
         "SELECT seq, scheduled_ns, wake_ns, completion_ns, minflt, majflt, nvcsw, nivcsw FROM canary_requests "
         "WHERE case_id = ?1 AND canary = ?2 ORDER BY seq");
  q.bind(1, case_id).bind(2, canary);
  CanaryRequestRow r;
  r.canary = canary;
  while (q.step()) {
    r.seq = q.int64(0);
    r.scheduled_ns = q.int64(1);
    r.wake_ns = q.opt_int64(2);
    r.completion_ns = q.opt_int64(3);
    r.minflt = q.opt_int64(4);
    r.majflt = q.opt_int64(5);
    r.nvcsw = q.opt_int64(6);
    r.nivcsw = q.opt_int64(7);
    row(r);
  }
}

std::vector<std::optional<std::int64_t>> pressure_responses(Db& db, const std::string& case_id,
                                                            const std::string& canary) {
  Stmt q(db,
         "SELECT r.completion_ns - r.scheduled_ns FROM canary_requests r JOIN phases p ON p.case_id = "
         "r.case_id AND p.phase = 'pressure' WHERE r.case_id = ?1 AND r.canary = ?2 AND "
         "r.scheduled_ns >= p.start_ns AND (p.end_ns IS NULL OR r.scheduled_ns < p.end_ns)");
  q.bind(1, case_id).bind(2, canary);
  std::vector<std::optional<std::int64_t>> out;
  while (q.step()) out.push_back(q.opt_int64(0));
  return out;
}

CanaryRequestWriter::CanaryRequestWriter(Db& db, std::int64_t case_key)
    : insert_(db,
              "INSERT INTO canary_requests_rows(case_key, canary, seq, scheduled_ns, wake_ns, completion_ns, "
              "minflt, majflt, nvcsw, nivcsw) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
      key_(case_key) {}

void CanaryRequestWriter::write(const CanaryRequestRow& r) {
  insert_.bind_all(key_, r.canary, r.seq, r.scheduled_ns, r.wake_ns, r.completion_ns, r.minflt, r.majflt, r.nvcsw,
                   r.nivcsw)
      .run();
}

}  // namespace results
