// The progress of each planned case (see progress.hpp).
#include "harness/campaign/store/progress.hpp"

#include "harness/campaign/store/states.hpp"
#include "results/store/attempts.hpp"
#include "results/store/schedule.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace harness::campaign {
namespace {

/// An operator's row, where the retry budget restarts (PROTOCOL.md).
bool restarts_budget(const results::AttemptRow& a) { return a.kind == "mark-infra" || a.kind == "reset-infra"; }

/// The progress of a case in schedule state `state` with attempts rows `rows`.
CaseProgress progress_of(const std::string& state, const std::vector<const results::AttemptRow*>& rows) {
  CaseProgress p;
  p.state = state;
  std::int64_t restart = 0;
  for (const auto* a : rows) {
    ++p.attempts;
    p.last_attempt = std::max(p.last_attempt, static_cast<int>(a->attempt));
    if (a->status == kInflightStatus) p.inflight = std::max(p.inflight, static_cast<int>(a->attempt));
    if (restarts_budget(*a)) restart = std::max(restart, a->attempt);
  }
  for (const auto* a : rows)
    if (!restarts_budget(*a) && a->kind != "interrupted" && a->attempt > restart) ++p.runs_since_mark;
  return p;
}

}  // namespace

std::map<std::string, CaseProgress> load_progress(results::Db& db) {
  const auto attempts = results::read_attempts(db);
  std::map<std::string, std::vector<const results::AttemptRow*>> of_case;
  for (const auto& a : attempts) of_case[a.case_id].push_back(&a);
  std::map<std::string, CaseProgress> out;
  for (const auto& s : results::read_schedule(db)) out[s.case_id] = progress_of(s.state, of_case[s.case_id]);
  return out;
}

CaseProgress case_progress(results::Db& db, const std::string& case_id) {
  const auto state = results::schedule_state(db, case_id);
  if (!state) throw std::runtime_error("case " + case_id + " missing from the schedule table");
  const auto attempts = results::read_case_attempts(db, case_id);
  std::vector<const results::AttemptRow*> rows;
  for (const auto& a : attempts) rows.push_back(&a);
  return progress_of(*state, rows);
}

}  // namespace harness::campaign
