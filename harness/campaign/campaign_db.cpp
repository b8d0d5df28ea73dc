// Campaign DB: stored plan, verification, progress, attempts (see campaign_db.hpp).
#include "harness/campaign/campaign_db.hpp"
#include "harness/json/limited_parse.hpp"

#include "analysis/overrides.hpp"
#include "harness/agent/token.hpp"
#include "harness/case/arm.hpp"
#include "harness/case/policy.hpp"
#include "harness/digest/sha256.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <stdexcept>

namespace harness::campaign {
namespace {

ImportObserver g_import_observer = nullptr;  // set_import_observer: none in the shipped CLI

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

/// The arm case `k` runs, as canonical JSON (harness/case/arm.hpp): resolve_arm over the
/// planned spec (the rest of the spec is not checked here: a plan's build pin may still be
/// unresolved). Throws std::invalid_argument naming the case when the arm cannot be resolved.
nlohmann::json planned_arm(const ScheduledCase& k) {
  const nlohmann::json* policy = k.spec.is_object() && k.spec.contains("policy") ? &k.spec.at("policy") : nullptr;
  try {
    const auto arm = harness::case_::resolve_arm(k.configuration, policy, k.dose_bytes);
    return {{"name", k.configuration}, {"params", arm.params}, {"policy", arm.policy}};
  } catch (const harness::case_::SpecError& e) {
    throw std::invalid_argument("plan: case " + k.case_id + ": field " + e.field() + ": " + e.what());
  }
}

/// Writes one row of the table arms (results/schema.sql, version 6) per arm of the plan's cases:
/// name = the cases' configuration; policy and params of each case (planned_arm), params {} when
/// the arm's cases disagree (a pilot's doses: the dose is per case, in dose_bytes); sha256 of the
/// arm's canonical JSON (harness/case/arm.hpp); position = the order of the plan JSON's `arms`
/// list when it has one, else the study's order (policy.hpp study_arms()); an arm neither names
/// comes after them in the order of its first case. Throws std::invalid_argument (planned_arm,
/// or two cases of one arm naming different policies).
void store_arms(results::Db& db, const Schedule& s) {
  struct PlannedArm {
    std::string policy;
    nlohmann::json params;  ///< null once two cases of the arm disagree
  };
  std::map<std::string, PlannedArm> arms;
  std::vector<std::string> names;  // in the order of their first case
  for (const auto& k : s.cases) {
    const nlohmann::json arm = planned_arm(k);
    const std::string policy = arm.at("policy").get<std::string>();
    auto [it, first] = arms.try_emplace(k.configuration, PlannedArm{policy, arm.at("params")});
    if (first) {
      names.push_back(k.configuration);
      continue;
    }
    if (it->second.policy != policy)
      throw std::invalid_argument("plan: arm '" + k.configuration + "' runs policy '" + it->second.policy +
                                  "' in one case and '" + policy + "' in case " + k.case_id);
    if (!it->second.params.is_null() && it->second.params != arm.at("params")) it->second.params = nullptr;
  }
  std::vector<std::string> order;
  const auto doc = nlohmann::json::parse(s.json_text, nullptr, false);
  if (doc.is_object() && doc.contains("arms") && doc.at("arms").is_array()) {
    for (const auto& a : doc.at("arms"))
      if (a.is_string()) order.push_back(a.get<std::string>());
      else if (a.is_object() && a.contains("name") && a.at("name").is_string()) order.push_back(a.at("name").get<std::string>());
  } else {
    order = harness::case_::study_arms();
  }
  const auto rank = [&](const std::string& n) {
    return static_cast<std::size_t>(std::find(order.begin(), order.end(), n) - order.begin());
  };
  std::stable_sort(names.begin(), names.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  results::Stmt ins(db, "INSERT INTO arms(name, policy, params_json, sha256, position) VALUES (?1, ?2, ?3, ?4, ?5)");
  std::int64_t position = 0;
  for (const auto& name : names) {
    const PlannedArm& a = arms.at(name);
    const nlohmann::json params = a.params.is_null() ? nlohmann::json::object() : a.params;
    const nlohmann::json canonical = {{"name", name}, {"params", params}, {"policy", a.policy}};
    ins.bind(1, name).bind(2, a.policy).bind(3, params.dump()).bind(4, harness::digest::sha256_hex(canonical.dump()));
    ins.bind(5, position++);
    ins.run();
  }
}

}  // namespace

std::string agent_case_id(const std::string& case_id, int attempt, const std::string& tag) {
  return case_id + ".a" + std::to_string(attempt) + (tag.empty() ? "" : "-" + tag);
}

void set_unusable_mark(results::Db& db, const std::string& vm, const std::string& why) {
  if (why.empty()) {
    // Cleared before every case of a reused guest: a read first, so that a VM without a mark
    // (the usual case) costs no write (a DELETE that matches nothing still takes SQLite's
    // write lock and commits).
    if (!meta(db, "unusable:" + vm)) return;
    results::Stmt d(db, "DELETE FROM campaign_meta WHERE key = ?1");
    d.bind(1, "unusable:" + vm).run();
  } else {
    put_meta(db, "unusable:" + vm, why);
  }
}

std::string db_tag(results::Db& db) {
  if (auto t = meta(db, "db_tag")) return *t;
  const std::string t = harness::agent::random_token().substr(0, 8);
  put_meta(db, "db_tag", t);
  return t;
}

bool has_plan(results::Db& db) { return meta(db, "schedule_sha256").has_value(); }

Campaign stored_campaign(results::Db& db, const std::string& db_path) {
  const auto yaml = results::has_table(db, "campaign_meta") ? meta(db, "campaign_yaml") : std::nullopt;
  if (!yaml) throw std::runtime_error(db_path + ": holds no plan (give the campaign FILE)");
  const auto file = meta(db, "campaign_file");
  std::optional<std::string> dir = meta(db, "campaign_dir");
  if (!dir && file && std::filesystem::path(*file).is_absolute())  // planned before campaign_dir was stored
    dir = std::filesystem::path(*file).parent_path().string();
  return parse_campaign_in(*yaml, file.value_or(db_path) + " (as stored in " + db_path + ")", dir);
}

void store_plan(results::Db& db, const Campaign& c, const Schedule& s) {
  db.transaction([&] {
    if (auto old = meta(db, "schedule_sha256")) {
      if (*old == s.sha256_hex) return;
      throw ScheduleTampered(db.path() + ": already holds a different plan (schedule sha256 " + *old +
                             ", new plan " + s.sha256_hex + "); use a new DB for a changed campaign");
    }
    put_meta(db, "name", c.name);
    put_meta(db, "kind", c.kind);
    db_tag(db);
    put_meta(db, "seed", std::to_string(c.seed));
    put_meta(db, "campaign_file", c.file);
    if (c.base_dir) put_meta(db, "campaign_dir", *c.base_dir);
    put_meta(db, "campaign_yaml", c.yaml_text);
    put_meta(db, "campaign_sha256", harness::digest::sha256_hex(c.yaml_text));
    put_meta(db, "schedule_json", s.json_text);
    put_meta(db, "schedule_sha256", s.sha256_hex);
    put_meta(db, "planned_unix_ns", std::to_string(unix_now_ns()));
    store_arms(db, s);  // before the schedule: its rows must name an arm (schema.sql triggers)
    results::Stmt ins(db,
                      "INSERT INTO schedule(case_id, ordinal, vm, regime, repeat, triplet_id, configuration, "
                      "dose_bytes, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    for (const auto& k : s.cases) {
      ins.bind(1, k.case_id).bind(2, k.ordinal).bind(3, k.vm).bind(4, k.regime).bind(5, k.repeat);
      ins.bind(6, k.triplet_id).bind(7, k.configuration).bind(8, k.dose_bytes).bind(9, std::string(kPendingState));
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

namespace {

// Retry budget (PROTOCOL.md): run attempts after the latest operator reset (mark-infra or
// reset-infra row); audit rows and attempts interrupted before the case reached the agent
// (kind 'interrupted': the runner died, not the case) are not runs.
const std::string kProgressSql =
    std::string("SELECT s.case_id, s.state, ") +
    "(SELECT count(*) FROM attempts a WHERE a.case_id = s.case_id), "
    "(SELECT count(*) FROM attempts a WHERE a.case_id = s.case_id "
    "  AND a.kind NOT IN ('mark-infra', 'reset-infra', 'interrupted') AND a.attempt > "
    "  coalesce((SELECT max(m.attempt) FROM attempts m WHERE m.case_id = s.case_id "
    "            AND m.kind IN ('mark-infra', 'reset-infra')), 0)), "
    "(SELECT coalesce(max(attempt), 0) FROM attempts a WHERE a.case_id = s.case_id), "
    "(SELECT coalesce(max(attempt), 0) FROM attempts a WHERE a.case_id = s.case_id AND a.status = '" +
    kInflightStatus + "') FROM schedule s";

CaseProgress progress_row(results::Stmt& q) {
  return CaseProgress{q.text(1), static_cast<int>(q.int64(2)), static_cast<int>(q.int64(3)),
                      static_cast<int>(q.int64(4)), static_cast<int>(q.int64(5))};
}

/// Writes the outcome row of attempt `a` (replacing its in-flight row) and schedule.state.
void write_attempt(results::Db& db, const AttemptRecord& a, const std::string& status,
                   const std::optional<std::string>& error, const std::string& kind = "") {
  results::Stmt ins(db,
                    "INSERT OR REPLACE INTO attempts(case_id, attempt, host, status, error, started_unix_ns, "
                    "ended_unix_ns, kind, detail_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  ins.bind(1, a.case_id).bind(2, a.attempt).bind(3, a.host).bind(4, status).bind(5, error);
  ins.bind(6, a.started_unix_ns).bind(7, a.ended_unix_ns).bind(8, kind.empty() ? a.kind : kind);
  if (a.detail.is_null()) ins.bind_null(9);
  else ins.bind(9, a.detail.dump());
  ins.run();
  const std::string state =
      status == kMarkedInfraStatus || status == kResetInfraStatus ? std::string(kInfraFailedStatus) : status;
  results::Stmt up(db, "UPDATE schedule SET state = ?2 WHERE case_id = ?1");
  up.bind(1, a.case_id).bind(2, state);
  up.run();
}

}  // namespace

std::map<std::string, CaseProgress> load_progress(results::Db& db) {
  std::map<std::string, CaseProgress> out;
  results::Stmt q(db, kProgressSql);
  while (q.step()) out[q.text(0)] = progress_row(q);
  return out;
}

CaseProgress case_progress(results::Db& db, const std::string& case_id) {
  results::Stmt q(db, kProgressSql + " WHERE s.case_id = ?1");
  q.bind(1, case_id);
  if (!q.step()) throw std::runtime_error("case " + case_id + " missing from the schedule table");
  return progress_row(q);
}

std::string import_attempt(results::Db& db, const std::string& bundle_path, const AttemptRecord& a,
                           const RanOn& on, const std::string& bundle_case_id) {
  const std::string& accelerator = on.accelerator;
  std::string status;
  AttemptRecord rec = a;
  results::import_bundle(db, bundle_path, a.case_id, [&](results::Db& d) {
    results::Stmt q(d, "SELECT status, error, outcome_json FROM main.cases WHERE case_id = ?1");
    q.bind(1, a.case_id);
    if (!q.step()) throw results::DbError(bundle_path + ": case '" + a.case_id + "' vanished during import");
    status = q.text(0);
    const auto error = q.opt_text(1);
    const auto outcome = q.opt_text(2);
    results::Stmt up(d, "UPDATE main.cases SET attempt = ?2 WHERE case_id = ?1");
    up.bind(1, a.case_id).bind(2, a.attempt);
    up.run();
    // The binaries that ran the case (PROTOCOL.md): the columns when the executor set
    // them, else outcome_json.source {commit, dirty}.
    if (outcome) {
      const auto j = harness::json::parse_or_discarded(*outcome);
      if (j.is_object() && j.contains("source") && j["source"].is_object()) {
        const auto& src = j["source"];
        results::Stmt sc(d,
                         "UPDATE main.cases SET source_commit = coalesce(source_commit, ?2), "
                         "source_dirty = coalesce(source_dirty, ?3) WHERE case_id = ?1");
        sc.bind(1, a.case_id);
        if (src.contains("commit") && src["commit"].is_string()) sc.bind(2, src["commit"].get<std::string>());
        else sc.bind_null(2);
        if (src.contains("dirty") && src["dirty"].is_boolean()) sc.bind(3, src["dirty"].get<bool>() ? 1 : 0);
        else sc.bind_null(3);
        sc.run();
      }
    }
    if (!accelerator.empty()) {  // the hosts file first (it knows what ran the guest), else what the guest detected
      results::Stmt ac(d, "SELECT accelerator FROM main.cases WHERE case_id = ?1");
      ac.bind(1, a.case_id);
      if (ac.step() && ac.opt_text(0) && *ac.opt_text(0) != accelerator) {
        if (!rec.detail.is_object()) rec.detail = nlohmann::json::object();
        rec.detail["accelerator_detected"] = *ac.opt_text(0);
      }
      results::Stmt au(d, "UPDATE main.cases SET accelerator = ?2 WHERE case_id = ?1");
      au.bind(1, a.case_id).bind(2, accelerator);
      au.run();
    }
    results::Stmt hu(d, "UPDATE main.cases SET host_uri = ?2, overcommitted = ?3, engine_kind = ?4 WHERE case_id = ?1");
    hu.bind(1, a.case_id);
    if (on.host_uri.empty()) hu.bind_null(2);
    else hu.bind(2, on.host_uri);
    if (on.overcommitted) hu.bind(3, std::int64_t{*on.overcommitted ? 1 : 0});
    else hu.bind_null(3);
    if (on.engine_kind.empty()) hu.bind_null(4);
    else hu.bind(4, on.engine_kind);
    hu.run();
    write_attempt(d, rec, status, error);
    if (g_import_observer) g_import_observer(a.case_id);
  }, bundle_case_id);
  return status;
}

void begin_attempt(results::Db& db, const AttemptRecord& a) {
  db.transaction([&] {  // takes this process's write turn (results::Db::transaction)
    results::Stmt ins(db,
                      "INSERT INTO attempts(case_id, attempt, host, status, error, started_unix_ns, ended_unix_ns, "
                      "kind, detail_json) VALUES (?1, ?2, ?3, ?4, NULL, ?5, NULL, ?6, ?7)");
    ins.bind(1, a.case_id).bind(2, a.attempt).bind(3, a.host).bind(4, std::string(kInflightStatus));
    ins.bind(5, a.started_unix_ns).bind(6, a.kind);
    if (a.detail.is_null()) ins.bind_null(7);
    else ins.bind(7, a.detail.dump());
    ins.run();
  });
}

void update_inflight(results::Db& db, const AttemptRecord& a) {
  db.transaction([&] {  // takes this process's write turn (results::Db::transaction)
    results::Stmt up(db,
                     "UPDATE attempts SET detail_json = ?3, kind = ?4, host = ?5 WHERE case_id = ?1 AND attempt = ?2 "
                     "AND status = ?6");
    up.bind(1, a.case_id).bind(2, a.attempt);
    if (a.detail.is_null()) up.bind_null(3);
    else up.bind(3, a.detail.dump());
    up.bind(4, a.kind).bind(5, a.host).bind(6, std::string(kInflightStatus));
    up.run();
  });
}

std::optional<AttemptRecord> inflight_attempt(results::Db& db, const std::string& case_id) {
  results::Stmt q(db,
                  "SELECT attempt, host, started_unix_ns, kind, detail_json FROM attempts "
                  "WHERE case_id = ?1 AND status = ?2 ORDER BY attempt DESC LIMIT 1");
  q.bind(1, case_id).bind(2, std::string(kInflightStatus));
  if (!q.step()) return std::nullopt;
  AttemptRecord a;
  a.case_id = case_id;
  a.attempt = static_cast<int>(q.int64(0));
  a.host = q.opt_text(1).value_or("");
  a.started_unix_ns = q.opt_int64(2).value_or(0);
  a.kind = q.text(3);
  if (auto d = q.opt_text(4)) a.detail = harness::json::parse_or_discarded(*d);
  if (a.detail.is_discarded()) a.detail = nullptr;
  return a;
}

void set_import_observer(ImportObserver observer) { g_import_observer = observer; }

void record_infra_failure(results::Db& db, const AttemptRecord& a, const std::string& error) {
  db.transaction([&] { write_attempt(db, a, kInfraFailedStatus, error); });
}

void record_lost(results::Db& db, const ScheduledCase& k, const std::string& campaign, const AttemptRecord& a,
                 const LostCase& why) {
  const nlohmann::json lost = {
      {"phase", why.phase.empty() ? nlohmann::json(nullptr) : nlohmann::json(why.phase)},
      {"last_seen_unix_ns", why.last_seen_unix_ns ? nlohmann::json(why.last_seen_unix_ns) : nlohmann::json(nullptr)},
      {"reason", why.reason}};
  nlohmann::json spec = k.spec;
  spec["case_id"] = k.case_id;
  AttemptRecord rec = a;
  if (!rec.detail.is_object()) rec.detail = nlohmann::json::object();
  rec.detail.update(lost);  // keeps what the runner recorded (takeovers, agent case id)
  db.transaction([&] {
    results::Stmt del(db, "DELETE FROM cases WHERE case_id = ?1");  // an earlier infra_failed attempt's rows
    del.bind(1, k.case_id);
    del.run();
    results::Stmt ins(db,
                      "INSERT INTO cases(case_id, campaign, vm, regime, repeat, triplet_id, configuration, dose_bytes, "
                      "attempt, status, error, started_unix_ns, ended_unix_ns, spec_json, outcome_json, source_commit, "
                      "source_dirty, accelerator, host_uri, overcommitted, engine_kind) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                      "?8, ?9, ?20, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?21)");
    ins.bind(1, k.case_id).bind(2, campaign).bind(3, k.vm).bind(4, k.regime).bind(5, k.repeat);
    ins.bind(6, k.triplet_id).bind(7, k.configuration).bind(8, k.dose_bytes).bind(9, a.attempt);
    ins.bind(10, why.reason).bind(11, a.started_unix_ns).bind(12, a.ended_unix_ns);
    ins.bind(13, spec.dump()).bind(14, nlohmann::json{{"lost", lost}}.dump());
    if (why.source_commit.empty()) ins.bind_null(15);
    else ins.bind(15, why.source_commit);
    if (why.source_dirty) ins.bind(16, *why.source_dirty ? 1 : 0);
    else ins.bind_null(16);
    if (why.ran_on.accelerator.empty()) ins.bind_null(17);
    else ins.bind(17, why.ran_on.accelerator);
    if (why.ran_on.host_uri.empty()) ins.bind_null(18);
    else ins.bind(18, why.ran_on.host_uri);
    if (why.ran_on.overcommitted) ins.bind(19, std::int64_t{*why.ran_on.overcommitted ? 1 : 0});
    else ins.bind_null(19);
    ins.bind(20, std::string(kLostStatus));
    if (why.ran_on.engine_kind.empty()) ins.bind_null(21);
    else ins.bind(21, why.ran_on.engine_kind);
    ins.run();
    write_attempt(db, rec, kLostStatus, why.reason);
  });
}

std::string mark_infra(results::Db& db, const std::string& case_id, const std::string& reason,
                       const std::string& operator_name, bool override_outcome) {
  bool blank = true;
  for (char ch : reason)
    if (!std::isspace(static_cast<unsigned char>(ch))) blank = false;
  if (blank) throw std::invalid_argument("mark-infra: --reason must say why (it is kept in the audit trail)");
  std::string previous;
  db.transaction([&] {
    results::Stmt q(db, "SELECT state FROM schedule WHERE case_id = ?1");
    q.bind(1, case_id);
    if (!q.step()) throw std::invalid_argument("mark-infra: no case '" + case_id + "' in the schedule of " + db.path());
    previous = q.text(0);
    if (previous == kPendingState)
      throw std::invalid_argument("mark-infra: case '" + case_id + "' is pending (never run): nothing to reclassify");
    const bool outcome = previous == kCompletedStatus || previous == kLostStatus;
    if (outcome && !override_outcome)
      throw std::invalid_argument(
          "mark-infra: case '" + case_id + "' is " + previous +
          ": that is its outcome, and it stands (study: a case is rerun only after an infrastructure failure, never "
          "after an OOM, failed or partial reclaim or an unfavourable latency result). If the infrastructure, not "
          "the treatment, decided it, give --override-outcome: the original outcome is kept in the audit row, the "
          "report names the case with its original p99s and shows Table 4 with it reinstated");
    // The original outcome as the analysis used it (its p99s), before a rerun replaces the rows.
    const nlohmann::json original = outcome ? analysis::original_outcome_record(db, case_id) : nlohmann::json(nullptr);
    nlohmann::json prev_case = nullptr;
    {
      results::Stmt c(db, "SELECT status, error, attempt, outcome_json FROM cases WHERE case_id = ?1");
      c.bind(1, case_id);
      if (c.step()) {
        const auto outcome = c.opt_text(3);
        prev_case = {{"status", c.text(0)},
                     {"error", c.opt_text(1) ? nlohmann::json(*c.opt_text(1)) : nlohmann::json(nullptr)},
                     {"attempt", c.int64(2)},
                     {"outcome_json", outcome ? harness::json::parse_or_discarded(*outcome) : nlohmann::json(nullptr)}};
      }
    }
    const auto p = case_progress(db, case_id);
    AttemptRecord a;
    a.case_id = case_id;
    a.attempt = p.last_attempt + 1;
    a.host = "operator";
    a.started_unix_ns = a.ended_unix_ns = unix_now_ns();
    a.detail = {{"reason", reason},
                {"previous_status", previous},
                {"operator", operator_name},
                {"previous_case", prev_case},
                {"override_outcome", outcome}};
    if (outcome) a.detail["original_outcome"] = original;
    results::Stmt up(db, "UPDATE cases SET status = ?3, error = ?2 WHERE case_id = ?1");
    up.bind(1, case_id).bind(2, "mark-infra: " + reason + " (was " + previous + ")").bind(3, std::string(kInfraFailedStatus));
    up.run();
    write_attempt(db, a, kMarkedInfraStatus, "mark-infra: " + reason, "mark-infra");
  });
  return previous;
}

std::vector<std::string> reset_infra(results::Db& db, const std::string& case_id, const std::string& reason,
                                     const std::string& operator_name) {
  bool blank = true;
  for (char ch : reason)
    if (!std::isspace(static_cast<unsigned char>(ch))) blank = false;
  if (blank) throw std::invalid_argument("reset-infra: --reason must say why (it is kept in the audit trail)");
  std::vector<std::string> done;
  db.transaction([&] {
    std::vector<std::string> ids;
    if (!case_id.empty()) {
      results::Stmt q(db, "SELECT state FROM schedule WHERE case_id = ?1");
      q.bind(1, case_id);
      if (!q.step())
        throw std::invalid_argument("reset-infra: no case '" + case_id + "' in the schedule of " + db.path());
      if (q.text(0) != kInfraFailedStatus)
        throw std::invalid_argument("reset-infra: case '" + case_id + "' is " + q.text(0) +
                                    ", not infra_failed: nothing to reset" +
                                    (q.text(0) == kLostStatus ? " (`harness mark-infra` reclassifies a lost case)" : ""));
      ids.push_back(case_id);
    } else {
      results::Stmt q(db, "SELECT case_id FROM schedule WHERE state = ?1 ORDER BY ordinal");
      q.bind(1, std::string(kInfraFailedStatus));
      while (q.step()) ids.push_back(q.text(0));
    }
    const std::int64_t now = unix_now_ns();
    for (const auto& id : ids) {
      const auto p = case_progress(db, id);
      AttemptRecord a;
      a.case_id = id;
      a.attempt = p.last_attempt + 1;
      a.host = "operator";
      a.started_unix_ns = a.ended_unix_ns = now;
      a.kind = "reset-infra";
      a.detail = {{"reason", reason}, {"operator", operator_name}, {"previous_runs", p.runs_since_mark}};
      write_attempt(db, a, kResetInfraStatus, "reset-infra: " + reason);
      done.push_back(id);
    }
  });
  return done;
}

}  // namespace harness::campaign
