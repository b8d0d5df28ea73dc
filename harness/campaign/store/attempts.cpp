// The attempts of a campaign's cases (see attempts.hpp).
#include "harness/campaign/store/attempts.hpp"

#include "harness/campaign/store/states.hpp"
#include "harness/json/limited_parse.hpp"
#include "results/store/attempts.hpp"
#include "results/store/schedule.hpp"

namespace harness::campaign {
namespace {

/// The attempts row of `a` with `status` and `error`; kind `kind`, or a.kind when empty.
results::AttemptRow attempt_row(const AttemptRecord& a, const std::string& status,
                                const std::optional<std::string>& error, const std::string& kind = "") {
  results::AttemptRow r;
  r.case_id = a.case_id;
  r.attempt = a.attempt;
  r.host = a.host;
  r.status = status;
  r.error = error;
  r.started_unix_ns = a.started_unix_ns;
  r.ended_unix_ns = a.ended_unix_ns;
  r.kind = kind.empty() ? a.kind : kind;
  if (!a.detail.is_null()) r.detail_json = a.detail.dump();
  return r;
}

}  // namespace

void record_attempt_outcome(results::Db& db, const AttemptRecord& a, const std::string& status,
                            const std::optional<std::string>& error, const std::string& kind) {
  results::replace_attempt(db, attempt_row(a, status, error, kind));
  const std::string state =
      status == kMarkedInfraStatus || status == kResetInfraStatus ? std::string(kInfraFailedStatus) : status;
  results::set_schedule_state(db, a.case_id, state);
}

void begin_attempt(results::Db& db, const AttemptRecord& a) {
  db.transaction([&] {  // takes this process's write turn (results::Db::transaction)
    results::AttemptRow r = attempt_row(a, kInflightStatus, std::nullopt);
    r.ended_unix_ns = std::nullopt;
    results::insert_attempt(db, r);
  });
}

void update_inflight(results::Db& db, const AttemptRecord& a) {
  db.transaction([&] {  // takes this process's write turn (results::Db::transaction)
    results::update_attempt_detail(db, attempt_row(a, kInflightStatus, std::nullopt), kInflightStatus);
  });
}

std::optional<AttemptRecord> inflight_attempt(results::Db& db, const std::string& case_id) {
  const auto row = results::latest_attempt_with_status(db, case_id, kInflightStatus);
  if (!row) return std::nullopt;
  AttemptRecord a;
  a.case_id = case_id;
  a.attempt = static_cast<int>(row->attempt);
  a.host = row->host.value_or("");
  a.started_unix_ns = row->started_unix_ns.value_or(0);
  a.kind = row->kind;
  if (row->detail_json) a.detail = harness::json::parse_or_discarded(*row->detail_json);
  if (a.detail.is_discarded()) a.detail = nullptr;
  return a;
}

void record_infra_failure(results::Db& db, const AttemptRecord& a, const std::string& error) {
  db.transaction([&] { record_attempt_outcome(db, a, kInfraFailedStatus, error); });
}

}  // namespace harness::campaign
