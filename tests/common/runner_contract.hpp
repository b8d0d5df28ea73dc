#pragma once
// The runner contract: one table of scenarios, each a case of tests/vm/campaign/contract.yaml
// with what happens to its guest and what the campaign DB, the agent and the report must say
// afterwards (docs/PROTOCOL.md "Case status", "A silent agent"). The same table is run against
// the fake agent (tests/unit/campaign/runner_contract_test.cpp, label unit) and against a real
// guest's agent (tests/vm/campaign/contract_vm_test.cpp, label vm), and both sides are judged
// by expect_contract(): a fake agent that stops behaving as the real one fails the unit side
// where the real side passes (or the other way round).
// Header-only; needs HARNESS_SOURCE_DIR and HARNESS_BINARY_DIR; include as
// "tests/common/runner_contract.hpp".
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "harness/agent/client.hpp"
#include "results/db.hpp"
#include "tests/common/db_query.hpp"
#include "tests/common/run_harness.hpp"
#include "tests/common/slurp.hpp"

namespace test_support::contract {

/// What happens to the guest while the runner follows a case.
enum class Fault {
  None,              ///< nothing: the case runs undisturbed
  DeathInWarmup,     ///< the guest dies once the runner has seen the case in warmup, and a
                     ///< fresh guest (new data disk, new boot) answers at the same address
  RebootInPressure,  ///< the guest reboots with its disk once the runner has seen the case in
                     ///< pressure (power cut and back: new boot id, the agent settles the case)
};

/// The phase the runner must have seen before the fault is applied ("" for Fault::None).
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
  std::string status; ///< cases.status and schedule.state after the run
  std::vector<AttemptWant> attempts;
  bool unclean_after; ///< the agent's unclean mark after the run names this case's attempt
  std::string lost_reason = "";  ///< text outcome_json.lost.reason holds (a lost case)
};

/// The table. Boot A is the guest's first boot, B the fresh guest after the death in warmup,
/// C the boot after the reboot in pressure.
inline const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> t = {
      {"normal case", 0, Fault::None, "completed", {{"completed", "restoration", "A", {}}}, false},
      // Lost before pressure: infra_failed, rerun on the next boot, completed; never a silence
      // verdict on boot ids (the case vanished before pressure, PROTOCOL.md).
      {"death in warmup", 1, Fault::DeathInWarmup, "completed",
       {{"infra_failed", "warmup", "A", {}}, {"completed", "restoration", "B", {}}}, false},
      // Lost after pressure started, decided on evidence: the boot id changed across the
      // silence; both recorded; never rerun; the restarted agent marks the VM unclean.
      {"reboot mid-pressure", 2, Fault::RebootInPressure, "lost", {{"lost", "pressure", "B", {"B", "C"}}}, true,
       "the guest rebooted while its agent was silent (boot id "},
  };
  return t;
}

/// The campaign file both sides run.
inline std::string campaign_file() { return std::string(HARNESS_SOURCE_DIR) + "/tests/vm/campaign/contract.yaml"; }

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

}  // namespace detail

/// The agent's state (GET /v1/cases/{id}) of the case its unclean mark in `health_after` names,
/// "" when there is no mark. The restarted agent settles that case by the last phase its executor
/// wrote (harness/case/phase_file.hpp, written durably so that a power cut keeps it).
inline std::string settled_state(harness::agent::AgentClient& agent, const nlohmann::json& health_after) {
  if (!health_after.contains("unclean") || !health_after["unclean"].is_object()) return "";
  return agent.status(health_after["unclean"].value("case_id", "")).value().state;
}

/// Judges one run of the contract campaign: the DB at `db_path`, the agent's GET /v1/health
/// answer after the run (`health_after`), the agent's own state of the case its unclean mark
/// names (`agent_settled`, settled_state()) and the report of `harness analyze` (`report`, from
/// analyse()). Every difference is a test failure naming the scenario.
inline void expect_contract(const std::string& db_path, const nlohmann::json& health_after,
                            const std::string& agent_settled, const nlohmann::json& report) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  detail::Boots boots;
  std::string unclean_case;  // agent case id the unclean mark must name ("" = none)
  std::string unclean_status;  // the state the agent must give that case (the DB's status)
  std::map<std::string, nlohmann::json> want_attempts;  // configuration -> attempts table row
  std::map<std::string, int> want_lost;                 // configuration -> lost cases
  int attempts_total = 0, completed = 0, lost = 0;
  for (const auto& s : scenarios()) {
    SCOPED_TRACE("scenario '" + s.name + "'");
    const std::string id = db_text(db, "SELECT case_id FROM schedule WHERE ordinal = " + std::to_string(s.ordinal));
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
    if (s.unclean_after) unclean_status = s.status;
    if (s.unclean_after)
      unclean_case = db_text(db, "SELECT json_extract(detail_json, '$.agent_case_id') FROM attempts WHERE case_id = '" +
                                     id + "' ORDER BY attempt DESC LIMIT 1");
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
  // The agent after the run: the reboot left its VM marked unclean, naming the settled case.
  SCOPED_TRACE("GET /v1/health after the run: " + health_after.dump());
  if (unclean_case.empty()) {
    EXPECT_TRUE(!health_after.contains("unclean") || health_after["unclean"].is_null());
  } else {
    const bool marked = health_after.contains("unclean") && health_after["unclean"].is_object();
    EXPECT_TRUE(marked) << "no unclean mark";
    if (marked) {
      EXPECT_EQ(health_after["unclean"].value("case_id", ""), unclean_case);
    }
    // The agent settled it as the runner did: by the phase its executor had written before the
    // power cut (an unflushed phase file read "setup" and gave infra_failed).
    EXPECT_EQ(agent_settled, unclean_status) << "the restarted agent's own state of " << unclean_case;
  }
  // The report: one case per configuration in its tables (a failed attempt is no case); the
  // attempts audit shows every attempt.
  const auto cases = detail::rows_by_configuration(report, "outcome_counts");
  const auto audit = detail::rows_by_configuration(report, "attempts");
  ASSERT_EQ(cases.size(), want_attempts.size()) << report.dump().substr(0, 2000);
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

}  // namespace test_support::contract
