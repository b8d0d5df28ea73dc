// The operator's audited actions (see operator_actions.hpp).
#include "harness/campaign/store/operator_actions.hpp"

#include "analysis/data/overrides.hpp"
#include "harness/campaign/store/attempts.hpp"
#include "harness/campaign/store/progress.hpp"
#include "harness/campaign/store/states.hpp"
#include "harness/json/limited_parse.hpp"
#include "results/store/cases.hpp"
#include "results/store/schedule.hpp"

#include <cctype>
#include <stdexcept>

namespace harness::campaign {
namespace {

/// Refuses a reason that is empty or only white space (`command` names the subcommand).
void require_reason(const std::string& reason, const std::string& command) {
  bool blank = true;
  for (char ch : reason)
    if (!std::isspace(static_cast<unsigned char>(ch))) blank = false;
  if (blank) throw std::invalid_argument(command + ": --reason must say why (it is kept in the audit trail)");
}

/// The cases row of `case_id` as the audit row keeps it ({status, error, attempt, outcome_json}),
/// null when it has none.
nlohmann::json previous_case(results::Db& db, const std::string& case_id) {
  const auto c = results::read_case(db, case_id);
  if (!c) return nullptr;
  return {{"status", c->status},
          {"error", c->error ? nlohmann::json(*c->error) : nlohmann::json(nullptr)},
          {"attempt", c->attempt},
          {"outcome_json", c->outcome_json ? harness::json::parse_or_discarded(*c->outcome_json) : nlohmann::json(nullptr)}};
}

/// The state of `case_id` before mark-infra, refused when the case cannot be reclassified.
std::string markable_state(results::Db& db, const std::string& case_id, bool override_outcome) {
  const auto state = results::schedule_state(db, case_id);
  if (!state) throw std::invalid_argument("mark-infra: no case '" + case_id + "' in the schedule of " + db.path());
  if (*state == kPendingState)
    throw std::invalid_argument("mark-infra: case '" + case_id + "' is pending (never run): nothing to reclassify");
  const bool outcome = *state == kCompletedStatus || *state == kLostStatus;
  if (outcome && !override_outcome)
    throw std::invalid_argument(
        "mark-infra: case '" + case_id + "' is " + *state +
        ": that is its outcome, and it stands (study: a case is rerun only after an infrastructure failure, never "
        "after an OOM, failed or partial reclaim or an unfavourable latency result). If the infrastructure, not "
        "the treatment, decided it, give --override-outcome: the original outcome is kept in the audit row, the "
        "report names the case with its original p99s and shows Table 4 with it reinstated");
  return *state;
}

/// The infra_failed cases reset-infra resets: `case_id` (refused unless infra_failed), or every
/// infra_failed case in plan order when it is empty.
std::vector<std::string> resettable_cases(results::Db& db, const std::string& case_id) {
  std::vector<std::string> ids;
  if (case_id.empty()) {
    for (const auto& s : results::read_schedule(db))
      if (s.state == kInfraFailedStatus) ids.push_back(s.case_id);
    return ids;
  }
  const auto state = results::schedule_state(db, case_id);
  if (!state) throw std::invalid_argument("reset-infra: no case '" + case_id + "' in the schedule of " + db.path());
  if (*state != kInfraFailedStatus)
    throw std::invalid_argument("reset-infra: case '" + case_id + "' is " + *state +
                                ", not infra_failed: nothing to reset" +
                                (*state == kLostStatus ? " (`harness mark-infra` reclassifies a lost case)" : ""));
  ids.push_back(case_id);
  return ids;
}

}  // namespace

std::string mark_infra(results::Db& db, const std::string& case_id, const std::string& reason,
                       const std::string& operator_name, bool override_outcome) {
  require_reason(reason, "mark-infra");
  std::string previous;
  db.transaction([&] {
    previous = markable_state(db, case_id, override_outcome);
    const bool outcome = previous == kCompletedStatus || previous == kLostStatus;
    // The original outcome as the analysis used it (its p99s), before a rerun replaces the rows.
    const nlohmann::json original = outcome ? analysis::original_outcome_record(db, case_id) : nlohmann::json(nullptr);
    const nlohmann::json prev_case = previous_case(db, case_id);
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
    results::set_case_status(db, case_id, kInfraFailedStatus, "mark-infra: " + reason + " (was " + previous + ")");
    record_attempt_outcome(db, a, kMarkedInfraStatus, "mark-infra: " + reason, "mark-infra");
  });
  return previous;
}

std::vector<std::string> reset_infra(results::Db& db, const std::string& case_id, const std::string& reason,
                                     const std::string& operator_name) {
  require_reason(reason, "reset-infra");
  std::vector<std::string> done;
  db.transaction([&] {
    const std::int64_t now = unix_now_ns();
    for (const auto& id : resettable_cases(db, case_id)) {
      const auto p = case_progress(db, id);
      AttemptRecord a;
      a.case_id = id;
      a.attempt = p.last_attempt + 1;
      a.host = "operator";
      a.started_unix_ns = a.ended_unix_ns = now;
      a.kind = "reset-infra";
      a.detail = {{"reason", reason}, {"operator", operator_name}, {"previous_runs", p.runs_since_mark}};
      record_attempt_outcome(db, a, kResetInfraStatus, "reset-infra: " + reason);
      done.push_back(id);
    }
  });
  return done;
}

}  // namespace harness::campaign
