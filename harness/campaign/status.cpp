// Campaign status report (see status.hpp).
#include "harness/campaign/status.hpp"
#include "harness/json/limited_parse.hpp"

#include "analysis/attempts_audit.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/campaign/campaign_db.hpp"
#include "harness/text/utc.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

namespace harness::campaign {

namespace {

/// Binds the four schedule states the counts below use: ?1 completed, ?2 infra_failed,
/// ?3 pending, ?4 lost.
void bind_states(results::Stmt& q) {
  q.bind(1, kCompletedStatus).bind(2, kInfraFailedStatus);
  q.bind(3, kPendingState).bind(4, kLostStatus);
}

std::string duration_text(double s) {
  const auto t = static_cast<long long>(s + 0.5);
  if (t < 60) return fmt::format("{} s", t);
  if (t < 3600) return fmt::format("{} min {:02d} s", t / 60, static_cast<int>(t % 60));
  return fmt::format("{} h {:02d} min", t / 3600, static_cast<int>((t % 3600) / 60));
}

using harness::text::utc_text;

}  // namespace

std::string progress_lines(results::Db& db, std::int64_t now) {
  results::Stmt span(db, "SELECT min(started_unix_ns), max(ended_unix_ns), sum(status = ?1) FROM attempts "
                         "WHERE kind NOT IN ('mark-infra', 'reset-infra') AND started_unix_ns IS NOT NULL");
  span.bind(1, kInflightStatus);
  if (!span.step() || span.is_null(0)) return "elapsed: nothing started yet\n";
  const std::int64_t first = span.int64(0);
  const std::int64_t last = span.opt_int64(1).value_or(first);
  const bool running = span.opt_int64(2).value_or(0) > 0;
  // Finished cases: the duration of the attempt that produced their outcome.
  results::Stmt fin(db, "SELECT avg(a.ended_unix_ns - a.started_unix_ns), count(*) FROM schedule s JOIN attempts a "
                        "ON a.case_id = s.case_id AND a.status = s.state WHERE s.state IN (?1, ?2) AND "
                        "a.ended_unix_ns IS NOT NULL AND a.attempt = (SELECT max(b.attempt) FROM attempts b WHERE "
                        "b.case_id = s.case_id AND b.status = s.state)");
  fin.bind(1, kCompletedStatus).bind(2, kLostStatus);
  fin.step();
  const std::int64_t finished = fin.opt_int64(1).value_or(0);
  results::Stmt pend(db, "SELECT vm, count(*) FROM schedule WHERE state = ?1 GROUP BY vm ORDER BY vm");
  pend.bind(1, kPendingState);
  std::int64_t pending = 0, most = 0, vms = 0;
  while (pend.step()) {
    pending += pend.int64(1);
    most = std::max(most, pend.int64(1));
    ++vms;
  }
  std::string out;
  if (pending == 0 && !running) {
    out += fmt::format("elapsed: {} from the first attempt's start ({}) to the last end ({})\n",
                       duration_text((last - first) / 1e9), utc_text(first), utc_text(last));
    if (finished) out += fmt::format("a finished case took {} on average\n", duration_text(fin.is_null(0) ? 0 : fin.int64(0) / 1e9));
    return out;
  }
  out += fmt::format("elapsed: {} since the first attempt started ({})\n", duration_text((now - first) / 1e9),
                     utc_text(first));
  if (finished == 0 || fin.is_null(0)) {
    out += fmt::format("ETA: not known yet (no case finished; {} pending)\n", pending);
    return out;
  }
  const double mean_s = static_cast<double>(fin.int64(0)) / 1e9;
  const double eta_s = static_cast<double>(most) * mean_s;
  out += fmt::format(
      "ETA: about {} for {} pending case(s) on {} VM(s) at {} per case (mean of {} finished case(s), the VMs in "
      "parallel): {}\n",
      duration_text(eta_s), pending, vms, duration_text(mean_s), finished,
      utc_text(now + static_cast<std::int64_t>(eta_s * 1e9)));
  return out;
}

namespace {

/// `header` and then `lines`, or "" when there are no lines.
std::string with_header(const std::string& header, const std::vector<std::string>& lines) {
  std::string out = lines.empty() ? "" : header;
  for (const auto& l : lines) out += l;
  return out;
}

/// The campaign's name and schedule SHA-256 (campaign_meta).
std::string identity_lines(results::Db& db) {
  std::string out;
  results::Stmt q(db, "SELECT key, value FROM campaign_meta WHERE key IN ('name','schedule_sha256') ORDER BY key");
  while (q.step()) out += fmt::format("{}: {}\n", q.text(0), q.text(1));
  return out;
}

/// Cases per state and attempts counted as the report counts them (analysis/attempts_audit.hpp):
/// finished runs; in-flight rows, interrupted runs and operator actions apart.
std::string count_lines(results::Db& db, const std::vector<analysis::AttemptRow>& attempts) {
  const auto n = analysis::count_attempts(attempts);
  results::Stmt q(db,
                  "SELECT count(*), sum(state=?1), sum(state=?2), sum(state=?3), "
                  "sum(state=?4) FROM schedule");
  bind_states(q);
  q.step();
  return fmt::format(
      "cases: {} planned, {} completed, {} lost, {} infra_failed, {} pending; {} attempts ({} reruns), {} in "
      "flight, {} interrupted before reaching an agent, {} operator actions\n",
      q.int64(0), q.opt_int64(1).value_or(0), q.opt_int64(4).value_or(0), q.opt_int64(2).value_or(0),
      q.opt_int64(3).value_or(0), n.attempts, n.reruns, n.in_flight, n.interrupted, n.operator_actions);
}

/// Cases per state of each VM.
std::string per_vm_lines(results::Db& db) {
  std::string out;
  results::Stmt q(db,
                  "SELECT vm, count(*), sum(state=?1), sum(state=?2), sum(state=?3), "
                  "sum(state=?4) FROM schedule GROUP BY vm ORDER BY vm");
  bind_states(q);
  while (q.step())
    out += fmt::format("  {}: {} planned, {} completed, {} lost, {} infra_failed, {} pending\n", q.text(0), q.int64(1),
                       q.int64(2), q.int64(5), q.int64(3), q.int64(4));
  return out;
}

/// VMs an agent marked unusable after an unclean restoration (runner.hpp RunSummary::unusable).
std::string unusable_lines(results::Db& db) {
  std::string out;
  results::Stmt q(db, "SELECT substr(key, 10), value FROM campaign_meta WHERE key LIKE 'unusable:%' ORDER BY key");
  while (q.step()) out += fmt::format("  {} UNUSABLE: {}\n", q.text(0), q.text(1));
  return out;
}

/// Lost after the pressure phase started: outcomes, never rerun (PROTOCOL.md).
std::string lost_lines(results::Db& db) {
  results::Stmt q(db,
                  "SELECT s.case_id, c.outcome_json FROM schedule s LEFT JOIN cases c ON c.case_id = s.case_id "
                  "WHERE s.state = ?1 ORDER BY s.ordinal");
  q.bind(1, kLostStatus);
  std::vector<std::string> lines;
  while (q.step()) {
    const auto j = harness::json::parse_or_discarded(q.opt_text(1).value_or("{}"));
    const auto lost = j.is_object() && j.contains("lost") ? j["lost"] : nlohmann::json::object();
    lines.push_back(fmt::format("  {} (phase {}): {}\n", q.text(0),
                                lost.contains("phase") && lost["phase"].is_string() ? lost["phase"].get<std::string>()
                                                                                    : std::string("never seen"),
                                lost.contains("reason") && lost["reason"].is_string()
                                    ? lost["reason"].get<std::string>()
                                    : std::string()));
  }
  return with_header("lost (kept as outcomes; only if the infrastructure decided one: `harness mark-infra DB CASE --reason "
                "TEXT --override-outcome`, audited and reported):\n",
                lines);
}

/// Attempts in flight: a runner is running, or was interrupted (the next run takes them over).
std::string in_flight_lines(results::Db& db) {
  results::Stmt q(db,
                  "SELECT case_id, attempt, json_extract(detail_json, '$.phase'), "
                  "json_extract(detail_json, '$.runner_pid') FROM attempts WHERE status = ?1 "
                  "ORDER BY case_id");
  q.bind(1, kInflightStatus);
  std::vector<std::string> lines;
  while (q.step())
    lines.push_back(fmt::format("  {} (attempt {}, phase {}, runner pid {})\n", q.text(0), q.int64(1),
                                q.opt_text(2).value_or("not seen"), q.opt_text(3).value_or("?")));
  return with_header("in flight (a runner is running, or was interrupted: `harness run` takes these over):\n", lines);
}

/// Attempts taken over from an interrupted runner (audit trail).
std::string takeover_lines(results::Db& db) {
  results::Stmt q(db,
                  "SELECT case_id, attempt, status, json_array_length(detail_json, '$.takeovers') FROM attempts "
                  "WHERE kind = 'adopted' AND status != ?1 ORDER BY case_id");
  q.bind(1, kInflightStatus);
  std::vector<std::string> lines;
  while (q.step())
    lines.push_back(fmt::format("  {} (attempt {}): {}, {} takeover(s)\n", q.text(0), q.int64(1), q.text(2),
                                q.opt_int64(3).value_or(0)));
  return with_header("taken over after the runner was interrupted:\n", lines);
}

/// Operator retry-budget resets (audit trail).
std::string reset_infra_lines(results::Db& db) {
  results::Stmt q(db,
                  "SELECT case_id, attempt, json_extract(detail_json, '$.operator'), "
                  "json_extract(detail_json, '$.reason') FROM attempts WHERE kind = 'reset-infra' "
                  "ORDER BY ended_unix_ns, case_id");
  std::vector<std::string> lines;
  while (q.step())
    lines.push_back(fmt::format("  {} (attempt {}): by {}: {}\n", q.text(0), q.int64(1), q.opt_text(2).value_or("?"),
                                q.opt_text(3).value_or("")));
  return with_header("reset-infra (operator restarted the retry budget):\n", lines);
}

/// Operator reclassifications (audit trail).
std::string mark_infra_lines(results::Db& db) {
  results::Stmt q(db,
                  "SELECT case_id, attempt, detail_json FROM attempts WHERE kind = 'mark-infra' "
                  "ORDER BY ended_unix_ns, case_id");
  std::vector<std::string> lines;
  while (q.step()) {
    const auto j = harness::json::parse_or_discarded(q.opt_text(2).value_or("{}"));
    auto str = [&](const char* k) {
      return j.is_object() && j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string("?");
    };
    const bool overridden = str("previous_status") == "completed" || str("previous_status") == "lost";
    lines.push_back(fmt::format("  {} (attempt {}): was {}{}, by {}: {}\n", q.text(0), q.int64(1),
                                str("previous_status"), overridden ? " (outcome overridden)" : "", str("operator"),
                                str("reason")));
  }
  return with_header("mark-infra (operator reclassified as infra_failed):\n", lines);
}

/// Cases whose retry budget ran out: their attempts and the last attempt's error.
std::string infra_failed_lines(results::Db& db, const std::vector<analysis::AttemptRow>& attempts) {
  results::Stmt q(db,
                  "SELECT s.case_id, "
                  "(SELECT error FROM attempts a WHERE a.case_id = s.case_id ORDER BY attempt DESC LIMIT 1) "
                  "FROM schedule s WHERE s.state = ?1 ORDER BY s.ordinal");
  q.bind(1, kInfraFailedStatus);
  std::vector<std::string> lines;
  while (q.step()) {
    std::vector<analysis::AttemptRow> mine;
    for (const auto& a : attempts)
      if (a.case_id == q.text(0)) mine.push_back(a);
    lines.push_back(fmt::format("  {} ({} attempts): {}\n", q.text(0), analysis::count_attempts(mine).attempts,
                                q.opt_text(1).value_or("")));
  }
  return with_header("infra_failed:\n", lines);
}

/// The first five pending cases in schedule order.
std::string next_pending_lines(results::Db& db) {
  results::Stmt q(db, "SELECT case_id FROM schedule WHERE state = ?1 ORDER BY ordinal LIMIT 5");
  q.bind(1, kPendingState);
  std::vector<std::string> lines;
  while (q.step()) lines.push_back("  " + q.text(0) + "\n");
  return with_header("next pending:\n", lines);
}

/// Outcomes that are kept as they are (study): OOM and failed/partial reclaim.
std::string kept_outcome_lines(results::Db& db) {
  results::Stmt q(db,
                  "SELECT (SELECT count(DISTINCT case_id) FROM telemetry WHERE coalesce(bg_oom_kill,0) + "
                  "coalesce(fg_oom_kill,0) > 0), (SELECT count(*) FROM reclaim_actions WHERE write_errno != 0)");
  q.step();
  return fmt::format("completed outcomes kept: {} case(s) with OOM kills, {} reclaim write(s) with errno != 0\n",
                     q.int64(0), q.int64(1));
}

}  // namespace

std::string status_report(results::Db& db, std::int64_t now_unix_ns) {
  if (now_unix_ns == 0)
    now_unix_ns = unix_now_ns();
  const auto attempts = analysis::load_attempts(db);
  // One step after the other (the order of the report), not one expression: each reads the DB.
  std::string out = identity_lines(db);
  out += count_lines(db, attempts);
  out += per_vm_lines(db);
  out += progress_lines(db, now_unix_ns);
  out += unusable_lines(db);
  out += lost_lines(db);
  out += in_flight_lines(db);
  out += takeover_lines(db);
  out += reset_infra_lines(db);
  out += mark_infra_lines(db);
  out += infra_failed_lines(db, attempts);
  out += next_pending_lines(db);
  out += kept_outcome_lines(db);
  return out;
}

}  // namespace harness::campaign
