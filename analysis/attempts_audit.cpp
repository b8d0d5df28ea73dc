// Attempts audit trail (see attempts_audit.hpp).
#include "analysis/attempts_audit.hpp"
#include "harness/json/limited_parse.hpp"

#include "results/db.hpp"

#include <nlohmann/json.hpp>

#include <map>

namespace analysis {

std::vector<AttemptRow> load_attempts(results::Db& db) {
  std::vector<AttemptRow> out;
  if (!has_table(db, "attempts")) return out;
  const bool v2 = has_column(db, "attempts", "kind");
  const std::string conf =
      "COALESCE((SELECT configuration FROM cases c WHERE c.case_id = a.case_id), "
      "(SELECT configuration FROM schedule s WHERE s.case_id = a.case_id), '?')";
  results::Stmt st(db, "SELECT a.case_id, a.attempt, a.status, a.error, " + conf + ", " +
                           (v2 ? std::string("a.kind, a.detail_json") : std::string("'run', NULL")) +
                           " FROM attempts a ORDER BY a.case_id, a.attempt");
  while (st.step()) {
    AttemptRow r;
    r.case_id = st.text(0);
    r.attempt = st.int64(1);
    r.status = st.text(2);
    r.error = st.opt_text(3).value_or("");
    r.configuration = st.text(4);
    r.kind = st.opt_text(5).value_or("run");
    if (auto d = st.opt_text(6)) {
      const auto j = harness::json::parse_or_discarded(*d);
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
