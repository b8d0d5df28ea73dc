// Campaign DB: stored plan, verification, progress, attempts (see campaign_db.hpp).
#include "harness/campaign/campaign_db.hpp"

#include "harness/digest/sha256.hpp"

#include <chrono>

namespace harness::campaign {
namespace {

std::optional<std::string> meta(results::Db& db, const std::string& key) {
  results::Stmt s(db, "SELECT value FROM campaign_meta WHERE key = ?1");
  s.bind(1, key);
  if (!s.step()) return std::nullopt;
  return s.text(0);
}

void put_meta(results::Db& db, const std::string& key, const std::string& value) {
  results::Stmt s(db, "INSERT OR REPLACE INTO campaign_meta(key, value) VALUES (?1, ?2)");
  s.bind(1, key).bind(2, value);
  s.run();
}

}  // namespace

std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string agent_case_id(const std::string& case_id, int attempt) {
  return attempt <= 1 ? case_id : case_id + ".a" + std::to_string(attempt);
}

void rename_bundle_case(const std::string& bundle_path, const std::string& from, const std::string& to) {
  if (from == to) return;
  results::Db b(bundle_path, results::Db::Mode::ReadWrite);
  // Child tables reference cases(case_id) without ON UPDATE CASCADE: rename with the
  // foreign-key check off, all tables in one transaction.
  b.exec("PRAGMA foreign_keys = OFF");
  b.transaction([&] {
    for (const char* t : {"cases", "phases", "canary_requests", "telemetry", "controller_events", "reclaim_actions",
                          "restoration", "artifacts"}) {
      results::Stmt u(b, std::string("UPDATE ") + t + " SET case_id = ?2 WHERE case_id = ?1");
      u.bind(1, from).bind(2, to);
      u.run();
    }
  });
}

bool has_plan(results::Db& db) { return meta(db, "schedule_sha256").has_value(); }

void store_plan(results::Db& db, const Campaign& c, const Schedule& s) {
  db.transaction([&] {
    if (auto old = meta(db, "schedule_sha256")) {
      if (*old == s.sha256_hex) return;
      throw ScheduleTampered(db.path() + ": already holds a different plan (schedule sha256 " + *old +
                             ", new plan " + s.sha256_hex + "); use a new DB for a changed campaign");
    }
    put_meta(db, "name", c.name);
    put_meta(db, "seed", std::to_string(c.seed));
    put_meta(db, "campaign_file", c.file);
    put_meta(db, "campaign_yaml", c.yaml_text);
    put_meta(db, "campaign_sha256", harness::digest::sha256_hex(c.yaml_text));
    put_meta(db, "schedule_json", s.json_text);
    put_meta(db, "schedule_sha256", s.sha256_hex);
    put_meta(db, "planned_unix_ns", std::to_string(unix_now_ns()));
    results::Stmt ins(db,
                      "INSERT INTO schedule(case_id, ordinal, vm, regime, repeat, triplet_id, configuration, "
                      "dose_bytes, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'pending')");
    for (const auto& k : s.cases) {
      ins.bind(1, k.case_id).bind(2, k.ordinal).bind(3, k.vm).bind(4, k.regime).bind(5, k.repeat);
      ins.bind(6, k.triplet_id).bind(7, k.configuration).bind(8, k.dose_bytes);
      ins.run();
    }
  });
}

Schedule load_verified_plan(results::Db& db) {
  const auto json = meta(db, "schedule_json");
  const auto hash = meta(db, "schedule_sha256");
  if (!json || !hash) throw ScheduleTampered(db.path() + ": holds no plan (run `harness plan` first)");
  Schedule s = schedule_from_json(*json);
  if (s.sha256_hex != *hash)
    throw ScheduleTampered(db.path() + ": schedule changed after planning: SHA-256 of the stored schedule is " +
                           s.sha256_hex + ", preregistered " + *hash);
  results::Stmt q(db,
                  "SELECT case_id, ordinal, vm, regime, repeat, triplet_id, configuration, dose_bytes "
                  "FROM schedule ORDER BY ordinal");
  std::size_t i = 0;
  for (; q.step(); ++i) {
    if (i >= s.cases.size())
      throw ScheduleTampered(db.path() + ": schedule table has extra row '" + q.text(0) + "' not in the plan");
    const auto& k = s.cases[i];
    const bool same = q.text(0) == k.case_id && q.int64(1) == k.ordinal && q.text(2) == k.vm &&
                      q.text(3) == k.regime && q.int64(4) == k.repeat && q.opt_text(5) == k.triplet_id &&
                      q.text(6) == k.configuration && q.opt_int64(7) == k.dose_bytes;
    if (!same)
      throw ScheduleTampered(db.path() + ": schedule table row " + std::to_string(i) + " ('" + q.text(0) +
                             "') differs from the preregistered plan (expected '" + k.case_id + "')");
  }
  if (i != s.cases.size())
    throw ScheduleTampered(db.path() + ": schedule table lacks " + std::to_string(s.cases.size() - i) +
                           " planned rows");
  return s;
}

std::map<std::string, CaseProgress> load_progress(results::Db& db) {
  std::map<std::string, CaseProgress> out;
  results::Stmt q(db,
                  "SELECT s.case_id, s.state, (SELECT count(*) FROM attempts a WHERE a.case_id = s.case_id) "
                  "FROM schedule s");
  while (q.step()) out[q.text(0)] = CaseProgress{q.text(1), static_cast<int>(q.int64(2))};
  return out;
}

namespace {
void write_attempt(results::Db& db, const AttemptRecord& a, const std::string& status,
                   const std::optional<std::string>& error) {
  results::Stmt ins(db,
                    "INSERT INTO attempts(case_id, attempt, host, status, error, started_unix_ns, ended_unix_ns) "
                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  ins.bind(1, a.case_id).bind(2, a.attempt).bind(3, a.host).bind(4, status).bind(5, error);
  ins.bind(6, a.started_unix_ns).bind(7, a.ended_unix_ns);
  ins.run();
  results::Stmt up(db, "UPDATE schedule SET state = ?2 WHERE case_id = ?1");
  up.bind(1, a.case_id).bind(2, status);
  up.run();
}
}  // namespace

std::string import_attempt(results::Db& db, const std::string& bundle_path, const AttemptRecord& a) {
  std::string status;
  results::import_bundle(db, bundle_path, a.case_id, [&](results::Db& d) {
    results::Stmt q(d, "SELECT status, error FROM main.cases WHERE case_id = ?1");
    q.bind(1, a.case_id);
    if (!q.step()) throw results::DbError(bundle_path + ": case '" + a.case_id + "' vanished during import");
    status = q.text(0);
    const auto error = q.opt_text(1);
    results::Stmt up(d, "UPDATE main.cases SET attempt = ?2 WHERE case_id = ?1");
    up.bind(1, a.case_id).bind(2, a.attempt);
    up.run();
    write_attempt(d, a, status, error);
  });
  return status;
}

void record_infra_failure(results::Db& db, const AttemptRecord& a, const std::string& error) {
  db.transaction([&] { write_attempt(db, a, "infra_failed", error); });
}

}  // namespace harness::campaign
