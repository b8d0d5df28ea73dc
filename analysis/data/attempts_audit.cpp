// Attempts audit trail (see attempts_audit.hpp).
#include "analysis/data/attempts_audit.hpp"
#include "harness/json/limited_parse.hpp"

#include "results/db.hpp"
#include "results/store/attempts.hpp"
#include "results/store/case_queries.hpp"
#include "results/store/schedule.hpp"

#include <nlohmann/json.hpp>

#include <map>

namespace analysis {

std::vector<AttemptRow> load_attempts(results::Db& db) {
  std::vector<AttemptRow> out;
  const auto rows = results::read_attempts(db);
  if (rows.empty()) return out;
  // Each attempt's arm: its case's configuration, else its schedule row's, else "?".
  std::map<std::string, std::string> arm_of;
  if (has_table(db, "schedule"))
    for (const auto& s : results::read_schedule(db)) arm_of[s.case_id] = s.configuration;
  if (has_table(db, "cases"))
    for (auto& [id, conf] : results::case_configurations_by_id(db)) arm_of[id] = conf;
  for (const auto& a : rows) {
    AttemptRow r;
    r.case_id = a.case_id;
    r.attempt = a.attempt;
    r.status = a.status;
    r.error = a.error.value_or("");
    const auto arm = arm_of.find(a.case_id);
    r.configuration = arm == arm_of.end() ? "?" : arm->second;
    r.kind = a.kind;
    if (a.detail_json) {
      const auto j = harness::json::parse_or_discarded(*a.detail_json);
      if (j.is_object() && j.contains("reason") && j["reason"].is_string()) r.reason = j["reason"].get<std::string>();
      if (!j.is_discarded()) r.detail = j;
    }
    out.push_back(std::move(r));
  }
  return out;
}

bool is_operator_action(const AttemptRow& a) { return a.kind == "mark-infra" || a.kind == "reset-infra"; }

AttemptCounts count_attempts(const std::vector<AttemptRow>& rows, const std::string& configuration) {
  AttemptCounts n;
  std::map<std::string, int> runs_of_case;
  for (const auto& a : rows) {
    if (!configuration.empty() && a.configuration != configuration) continue;
    if (is_operator_action(a)) {
      ++n.operator_actions;
    } else if (a.status == "running") {
      ++n.in_flight;
    } else if (a.kind == "interrupted") {
      ++n.interrupted;
    } else {
      ++n.attempts;
      n.completed += a.status == "completed";
      n.infra_failed += a.status == "infra_failed";
      n.lost += a.status == "lost";
      if (runs_of_case[a.case_id]++ > 0) ++n.reruns;
    }
  }
  return n;
}

}  // namespace analysis
