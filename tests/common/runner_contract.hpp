#pragma once
// The runner contract: what the runner meets on an agent, and what the campaign DB, the agent and
// the report must say afterwards (docs/PROTOCOL.md "Case status", "A silent agent";
// harness/agent/API.md). Run against the fake agent (tests/unit/campaign/runner_contract_test.cpp,
// label unit) and against a real guest's agent (tests/vm/campaign/contract_vm_test.cpp, label
// vm); both sides are judged by the functions here: a fake agent that stops behaving as the real
// one fails the unit side where the real side passes (or the other way round).
//
// Two tables. scenarios(): the cases of tests/vm/campaign/contract.yaml, run by two `harness run`
// of one DB on one agent:
//   run 1  the first case's guest reboots in pressure (lost); the restarted agent marks the VM
//          unclean, so the runner leaves the other cases pending (no attempt) and ends;
//   then   the test clears the mark (DELETE /v1/unclean) and submits a case of its own to the
//          agent (foreign_case_id()), which holds the agent's busy slot;
//   run 2  the runner's first submission meets 409 busy and waits (no attempt spent) until the
//          test, having read the runner's "agent busy, waiting" line, cancels the foreign case;
//          the next case loses its guest in warmup (infra_failed, rerun on a fresh guest).
// campaign_scenarios(): campaigns of their own, each on its own DB and the same agent after the
// two runs, every case of which meets one behaviour: a spec the agent refuses (400), a bundle
// that says lost (the executor's own failure after pressure started).
// Header-only; needs HARNESS_SOURCE_DIR and HARNESS_BINARY_DIR; include as
// "tests/common/runner_contract.hpp".
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "harness/agent/client/client.hpp"
#include "results/db.hpp"
#include "tests/common/db_query.hpp"
#include "tests/common/run_harness.hpp"
#include "tests/common/slurp.hpp"

namespace test_support::contract {

/// What happens to the guest, or on the agent, while the runner follows a case.
enum class Fault {
  None,              ///< nothing: the case runs undisturbed
  DeathInWarmup,     ///< the guest dies once the runner has seen the case in warmup, and a
                     ///< fresh guest (new data disk, new boot) answers at the same address
  RebootInPressure,  ///< the guest reboots with its disk once the runner has seen the case in
                     ///< pressure (power cut and back: new boot id, the agent settles the case)
  BusyAtSubmission,  ///< the agent runs the test's own case (foreign_case_id()) when the runner
                     ///< submits this one: 409 busy until the test cancels it, which it does once
                     ///< the runner's output says it waits (busy_line())
};

/// The phase the runner must have seen before the fault is applied ("" when none is).
inline std::string fault_phase(Fault f) {
  return f == Fault::DeathInWarmup ? "warmup" : f == Fault::RebootInPressure ? "pressure" : "";
}

/// One attempt row (kind run) as the DB must hold it. Boot ids are labels ("A", "B", ...):
/// one label is one boot id, two labels two different ones (the actual ids are random).
struct AttemptWant {
  std::string status;                  ///< attempts.status
  std::string phase;                   ///< detail_json.phase (the last phase the runner saw)
  std::string boot;                    ///< detail_json.boot_id, as a label
  std::vector<std::string> boots_seen; ///< detail_json.silence.boot_ids_seen, as labels (empty: absent)
};

struct Scenario {
  std::string name;
  int ordinal;        ///< schedule ordinal of the case it happens to
  Fault fault;
  int run;            ///< the `harness run` (1 or 2) that decides the case; before run 2 it is pending
  std::string status; ///< cases.status and schedule.state after its run
  std::vector<AttemptWant> attempts;
  bool marks_unclean; ///< the agent's unclean mark after run 1 names this case's attempt
  std::string lost_reason = "";  ///< text outcome_json.lost.reason holds (a lost case)
};

/// The table. Boot A is the guest's first boot, B the boot after the reboot in pressure, C the
/// fresh guest after the death in warmup.
inline const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> t = {
      // Lost after pressure started, decided on evidence: the boot id changed across the
      // silence; both recorded; never rerun; the restarted agent marks the VM unclean.
      {"reboot mid-pressure", 0, Fault::RebootInPressure, 1, "lost", {{"lost", "pressure", "A", {"A", "B"}}}, true,
       "the guest rebooted while its agent was silent (boot id "},
      // The unclean mark leaves the case pending in run 1 with no attempt (the VM unusable);
      // in run 2, a busy agent is waited for, never an attempt spent.
      {"unclean mark, then busy", 1, Fault::BusyAtSubmission, 2, "completed", {{"completed", "restoration", "B", {}}},
       false},
      // Lost before pressure: infra_failed, rerun on the next boot, completed; never a silence
      // verdict on boot ids (the case vanished before pressure, PROTOCOL.md).
      {"death in warmup", 2, Fault::DeathInWarmup, 2, "completed",
       {{"infra_failed", "warmup", "B", {}}, {"completed", "restoration", "C", {}}}, false},
  };
  return t;
}

/// The campaign file both sides run twice.
inline std::string campaign_file() { return std::string(HARNESS_SOURCE_DIR) + "/tests/vm/campaign/contract.yaml"; }

/// The agent case id of the test's own case that keeps the agent busy (Fault::BusyAtSubmission).
inline std::string foreign_case_id() { return "contract-foreign"; }

/// The spec of the foreign case: the spec the runner stored for the case of ordinal 0 (a case
/// of the same campaign, so that the agent accepts and runs it), with foreign_case_id().
inline nlohmann::json foreign_spec(const std::string& db_path) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  auto spec = nlohmann::json::parse(
      db_text(db, "SELECT spec_json FROM cases WHERE case_id = (SELECT case_id FROM schedule WHERE ordinal = 0)"),
      nullptr, false);
  if (spec.is_object()) spec["case_id"] = foreign_case_id();
  return spec;
}

/// The SQL (a count) that says the runner has recorded the agent's silence in the first attempt of
/// the case at `ordinal`: each side keeps a dead guest down until then (a guest back within the
/// client's retries of one request is answered by the new boot without a silence, and the runner
/// then compares no boot ids).
inline std::string silence_recorded_sql(int ordinal) {
  return "SELECT count(*) FROM attempts WHERE attempt = 1 AND case_id = (SELECT case_id FROM schedule WHERE ordinal = " +
         std::to_string(ordinal) + ") AND json_array_length(detail_json, '$.silence.episodes') >= 1";
}

/// The runner's progress line that says it waits for the busy agent (harness/campaign/runner/
/// adoption.cpp), as it names the foreign case (harness::agent::Busy::message()).
inline std::string busy_line() { return "agent busy, waiting: "; }
inline std::string busy_message() { return "busy: case " + foreign_case_id() + " is running"; }

/// Campaigns of their own (one DB each, the same agent), every case meeting one behaviour.
struct CampaignScenario {
  std::string name;
  std::string file;                          ///< the campaign
  bool executor_lost;                        ///< the executor ends each case lost after pressure
                                             ///< (the fake side: fake::Outcome::LostBundle)
  std::string status;                        ///< every case's cases.status and schedule.state
  std::vector<std::string> attempt_statuses; ///< every case's attempt rows (kind run), in order
  std::string error;                         ///< text every case's error holds (attempts.error, or
                                             ///< cases.error when the bundle was imported)
  bool bundle_imported;                      ///< the bundle's rows came in (telemetry)
};

inline const std::vector<CampaignScenario>& campaign_scenarios() {
  const std::string dir = std::string(HARNESS_SOURCE_DIR) + "/tests/vm/campaign/";
  static const std::vector<CampaignScenario> t = {
      // The canary database lies outside the agent's data directory: POST is 400 naming the
      // field, each attempt an infrastructure failure (1 + runner.max_infra_retries of them).
      {"refused spec (400)", dir + "contract-refused.yaml", false, "infra_failed", {"infra_failed", "infra_failed"},
       "bad request (400): request body: field 'canaries.sqlite_db_path': /tmp/contract-canary.db ", false},
      // The canary database is a directory: canary-sqlite cannot open it and leaves no trace, which
      // the executor finds after the pressure phase: a bundle with status lost, imported as the
      // outcome, never rerun.
      {"lost bundle", dir + "contract-lost.yaml", true, "lost", {"lost"},
       "canary-sqlite left no readable trace (", true},
  };
  return t;
}

/// `harness analyze DB --out DIR` (B = 2000: the simultaneous interval needs at least 1600),
/// and DIR/report.json (null when unreadable).
inline nlohmann::json analyse(const std::string& db_path, const std::string& out_dir) {
  const auto r = run_harness("analyze " + db_path + " --out " + out_dir + " -B 2000 --seed 7", out_dir + ".log");
  EXPECT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(slurp(out_dir + "/report.json"), nullptr, false);
  return j.is_discarded() ? nlohmann::json() : j;
}

namespace detail {

/// Table `id` of report.json as {configuration: row as {column_name: cell}}.
inline std::map<std::string, nlohmann::json> rows_by_configuration(const nlohmann::json& report, const std::string& id) {
  std::map<std::string, nlohmann::json> out;
  if (!report.is_object() || !report.contains("tables")) return out;
  for (const auto& t : report["tables"]) {
    if (t.value("id", "") != id) continue;
    for (const auto& row : t["rows"]) {
      nlohmann::json o = nlohmann::json::object();
      for (std::size_t i = 0; i < row.size() && i < t["column_names"].size(); ++i)
        o[t["column_names"][i].get<std::string>()] = row[i];
      if (o.contains("configuration") && o["configuration"].is_string()) out[o["configuration"]] = o;
    }
  }
  return out;
}

/// Binds boot-id labels to ids: the first use of a label binds it; a label must always mean the
/// same id and two labels never the same id.
struct Boots {
  std::map<std::string, std::string> id_of;
  void expect(const std::string& label, const std::string& id, const std::string& where) {
    SCOPED_TRACE(where);
    ASSERT_FALSE(id.empty() || id == "(none)") << "no boot id recorded for boot " << label;
    const auto it = id_of.find(label);
    if (it != id_of.end()) {
      EXPECT_EQ(id, it->second) << "boot " << label << " recorded as two different ids";
      return;
    }
    for (const auto& [l, other] : id_of) EXPECT_NE(id, other) << "boots " << l << " and " << label << " have one id";
    id_of[label] = id;
  }
};

inline std::string case_of(results::Db& db, int ordinal) {
  return db_text(db, "SELECT case_id FROM schedule WHERE ordinal = " + std::to_string(ordinal));
}

}  // namespace detail

/// The agent's state (GET /v1/cases/{id}) of the case its unclean mark in `health` names, ""
/// when there is no mark. The restarted agent settles that case by the last phase its executor
/// wrote (harness/case/run/phase_file.hpp, written durably so that a power cut keeps it).
inline std::string settled_state(harness::agent::AgentClient& agent, const nlohmann::json& health) {
  if (!health.contains("unclean") || !health["unclean"].is_object()) return "";
  return agent.status(health["unclean"].value("case_id", "")).value().state;
}

/// What each side reads between the two runs, before it clears the mark.
struct AfterFirstRun {
  nlohmann::json health;                ///< GET /v1/health
  std::string settled;                  ///< settled_state() of the case the mark names
  std::string unusable;                 ///< the DB's campaign_meta "unusable:vm0" ("(none)" without)
  std::map<int, std::string> state;     ///< schedule.state by ordinal
  std::map<int, std::int64_t> attempts; ///< attempt rows by ordinal
};

inline AfterFirstRun after_first_run(const std::string& db_path, harness::agent::AgentClient& agent) {
  AfterFirstRun a;
  a.health = agent.health().value();
  a.settled = settled_state(agent, a.health);
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  a.unusable = db_text(db, "SELECT value FROM campaign_meta WHERE key = 'unusable:vm0'");
  for (const auto& s : scenarios()) {
    const std::string id = detail::case_of(db, s.ordinal);
    a.state[s.ordinal] = db_text(db, "SELECT state FROM schedule WHERE case_id = '" + id + "'");
    a.attempts[s.ordinal] = db_count(db, "SELECT count(*) FROM attempts WHERE case_id = '" + id + "'");
  }
  return a;
}

/// What each side observed of the two runs of the contract campaign.
struct Observed {
  AfterFirstRun first;
  nlohmann::json health_after;  ///< GET /v1/health after run 2
  std::string foreign_state;    ///< the agent's state of the foreign case after run 2
  std::string run2_output;      ///< the runner's progress output of run 2
  nlohmann::json report;        ///< analyse() of the DB after run 2
};

/// Judges run 1 (what `o.first` holds): the marking scenario decided, the VM marked unclean naming
/// its attempt and the agent's own state of it as the DB's, the campaign's unusable mark, and
/// every case of run 2 still pending without an attempt.
inline void expect_first_run(const std::string& db_path, const AfterFirstRun& first) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  SCOPED_TRACE("after run 1; GET /v1/health: " + first.health.dump());
  for (const auto& s : scenarios()) {
    SCOPED_TRACE("scenario '" + s.name + "'");
    if (s.run == 2) {
      EXPECT_EQ(first.state.at(s.ordinal), "pending");
      EXPECT_EQ(first.attempts.at(s.ordinal), 0) << "an attempt was spent on an unusable VM";
      continue;
    }
    EXPECT_EQ(first.state.at(s.ordinal), s.status);
    if (!s.marks_unclean) continue;
    const std::string id = detail::case_of(db, s.ordinal);
    const std::string agent_id = db_text(db, "SELECT json_extract(detail_json, '$.agent_case_id') FROM attempts WHERE "
                                             "case_id = '" + id + "' ORDER BY attempt DESC LIMIT 1");
    const bool marked = first.health.contains("unclean") && first.health["unclean"].is_object();
    ASSERT_TRUE(marked) << "no unclean mark";
    EXPECT_EQ(first.health["unclean"].value("case_id", ""), agent_id);
    // The agent settled it as the runner did: by the phase its executor had written before the
    // power cut (an unflushed phase file read "setup" and gave infra_failed).
    EXPECT_EQ(first.settled, s.status) << "the restarted agent's own state of " << agent_id;
    // The runner recorded why the VM is unusable (harness status shows it).
    EXPECT_NE(first.unusable.find("the restoration of case " + agent_id + " was unclean"), std::string::npos)
        << first.unusable;
    EXPECT_NE(first.unusable.find("DELETE /v1/unclean"), std::string::npos) << first.unusable;
  }
}

/// Judges the contract campaign after run 2 (`db_path`, what the side observed in `o`). Every
/// difference is a test failure naming the scenario.
inline void expect_contract(const std::string& db_path, const Observed& o) {
  expect_first_run(db_path, o.first);
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  detail::Boots boots;
  std::map<std::string, nlohmann::json> want_attempts;  // configuration -> attempts table row
  std::map<std::string, int> want_lost;                 // configuration -> lost cases
  int attempts_total = 0, completed = 0, lost = 0;
  for (const auto& s : scenarios()) {
    SCOPED_TRACE("scenario '" + s.name + "'");
    const std::string id = detail::case_of(db, s.ordinal);
    const std::string conf = db_text(db, "SELECT configuration FROM schedule WHERE case_id = '" + id + "'");
    EXPECT_EQ(db_text(db, "SELECT state FROM schedule WHERE case_id = '" + id + "'"), s.status);
    EXPECT_EQ(db_text(db, "SELECT status FROM cases WHERE case_id = '" + id + "'"), s.status);
    if (!s.lost_reason.empty()) {
      const std::string why = db_text(db, "SELECT json_extract(outcome_json, '$.lost.reason') FROM cases WHERE case_id = '" + id + "'");
      EXPECT_NE(why.find(s.lost_reason), std::string::npos) << why;
    }
    completed += s.status == "completed";
    lost += s.status == "lost";
    // Every attempt row of the case is a run (no adopted, interrupted or operator rows).
    EXPECT_EQ(db_count(db, "SELECT count(*) FROM attempts WHERE case_id = '" + id + "'"),
              static_cast<std::int64_t>(s.attempts.size()))
        << (s.status == "lost" ? "a lost case was rerun" : "attempts differ");
    results::Stmt q(db,
                    "SELECT attempt, kind, status, json_extract(detail_json, '$.phase'), "
                    "json_extract(detail_json, '$.boot_id'), json_extract(detail_json, '$.silence.boot_ids_seen') "
                    "FROM attempts WHERE case_id = ?1 ORDER BY attempt");
    q.bind(1, id);
    // One attempt at a time: a fatal failure ends the judgement of that attempt only.
    auto judge_attempt = [&](std::size_t i) {
      const auto& w = s.attempts[i];
      const std::string where = id + " attempt " + std::to_string(i + 1);
      SCOPED_TRACE(where);
      ASSERT_TRUE(q.step()) << "missing";
      EXPECT_EQ(q.int64(0), static_cast<std::int64_t>(i + 1));
      EXPECT_EQ(q.text(1), "run");
      EXPECT_EQ(q.text(2), w.status);
      EXPECT_EQ(q.is_null(3) ? "(none)" : q.text(3), w.phase);
      boots.expect(w.boot, q.is_null(4) ? "" : q.text(4), where + " boot_id");
      const auto seen = q.is_null(5) ? nlohmann::json() : nlohmann::json::parse(q.text(5));
      if (w.boots_seen.empty()) {
        EXPECT_TRUE(seen.is_null()) << "boot ids seen in a silence: " << seen.dump();
      } else {
        ASSERT_TRUE(seen.is_array()) << "no silence.boot_ids_seen";
        ASSERT_EQ(seen.size(), w.boots_seen.size()) << seen.dump();
        for (std::size_t b = 0; b < seen.size(); ++b)
          boots.expect(w.boots_seen[b], seen[b].get<std::string>(), where + " boot_ids_seen");
      }
    };
    for (std::size_t i = 0; i < s.attempts.size(); ++i) judge_attempt(i);
    if (s.fault == Fault::BusyAtSubmission) {
      // The runner said it waits, with the agent's own words naming the foreign case, and that
      // case ended as the test's cancel ends a running case.
      const auto at = o.run2_output.find(busy_line());
      ASSERT_NE(at, std::string::npos) << "the runner never said it waits for the busy agent:\n" << o.run2_output;
      const std::string line = o.run2_output.substr(at, o.run2_output.find('\n', at) - at);
      EXPECT_NE(line.find("conflict (409): " + busy_message()), std::string::npos) << line;
      EXPECT_EQ(o.foreign_state, "cancelled");
    }
    attempts_total += static_cast<int>(s.attempts.size());
    int infra = 0, lost_attempts = 0;
    for (const auto& w : s.attempts) {
      infra += w.status == "infra_failed";
      lost_attempts += w.status == "lost";
    }
    want_attempts[conf] = {{"attempts", s.attempts.size()},
                           {"infra_failures", infra},
                           {"lost", lost_attempts},
                           {"reruns", s.attempts.size() - 1}};
    want_lost[conf] = s.status == "lost" ? 1 : 0;
  }
  // The run as a whole: every case decided, nothing pending, no attempt beyond the table's.
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM schedule"), static_cast<std::int64_t>(scenarios().size()));
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM schedule WHERE state = 'completed'"), completed);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM schedule WHERE state = 'lost'"), lost);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM attempts"), attempts_total);
  // After run 2: the mark was cleared and nothing marked the VM again; the runner's unusable
  // mark is gone too.
  EXPECT_TRUE(!o.health_after.contains("unclean") || o.health_after["unclean"].is_null()) << o.health_after.dump();
  EXPECT_EQ(db_text(db, "SELECT value FROM campaign_meta WHERE key = 'unusable:vm0'"), "(none)");
  // The report: one case per configuration in its tables (a failed attempt is no case); the
  // attempts audit shows every attempt.
  const auto cases = detail::rows_by_configuration(o.report, "outcome_counts");
  const auto audit = detail::rows_by_configuration(o.report, "attempts");
  ASSERT_EQ(cases.size(), want_attempts.size()) << o.report.dump().substr(0, 2000);
  for (const auto& [conf, want] : want_attempts) {
    SCOPED_TRACE("configuration " + conf);
    if (!cases.count(conf) || !audit.count(conf)) {
      ADD_FAILURE() << "no row in the outcome counts or the attempts audit";
      continue;
    }
    EXPECT_EQ(cases.at(conf)["cases"], 1) << cases.at(conf).dump();
    EXPECT_EQ(cases.at(conf)["lost_cases"], want_lost.at(conf)) << cases.at(conf).dump();
    for (const auto& [k, v] : want.items()) EXPECT_EQ(audit.at(conf)[k], v) << k << ": " << audit.at(conf).dump();
  }
}

/// Judges one campaign scenario's DB after its run.
inline void expect_campaign_scenario(const CampaignScenario& s, const std::string& db_path) {
  SCOPED_TRACE("campaign scenario '" + s.name + "'");
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  const auto n = db_count(db, "SELECT count(*) FROM schedule");
  ASSERT_GE(n, 1);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM schedule WHERE state = '" + s.status + "'"), n);
  // A case left infra_failed has attempts and no row in cases (no outcome: PROTOCOL.md).
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM cases WHERE status = '" + s.status + "'"),
            s.status == "infra_failed" ? 0 : n);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM cases"), s.status == "infra_failed" ? 0 : n);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM attempts"), n * static_cast<std::int64_t>(s.attempt_statuses.size()));
  results::Stmt q(db,
                  "SELECT a.case_id, a.attempt, a.kind, a.status, coalesce(a.error, ''), coalesce(c.error, '') "
                  "FROM attempts a LEFT JOIN cases c USING (case_id) ORDER BY a.case_id, a.attempt");
  std::int64_t rows = 0;
  while (q.step()) {
    ++rows;
    const auto i = static_cast<std::size_t>(q.int64(1)) - 1;
    SCOPED_TRACE(q.text(0) + " attempt " + std::to_string(i + 1));
    ASSERT_LT(i, s.attempt_statuses.size());
    EXPECT_EQ(q.text(2), "run");
    EXPECT_EQ(q.text(3), s.attempt_statuses[i]);
    const std::string error = s.bundle_imported ? q.text(5) : q.text(4);
    EXPECT_NE(error.find(s.error), std::string::npos) << error;
  }
  EXPECT_EQ(rows, n * static_cast<std::int64_t>(s.attempt_statuses.size()));
  if (s.bundle_imported)
    EXPECT_EQ(db_count(db, "SELECT count(DISTINCT case_id) FROM telemetry"), n) << "a bundle's rows are missing";
  else
    EXPECT_EQ(db_count(db, "SELECT count(*) FROM telemetry"), 0);
}

}  // namespace test_support::contract
