// Campaign status report (see status.hpp).
#include "harness/campaign/commands/status.hpp"
#include "harness/json/limited_parse.hpp"

#include "analysis/data/attempts_audit.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/campaign/store/campaign_db.hpp"
#include "harness/text/utc.hpp"
#include "results/store/attempt_views.hpp"
#include "results/store/attempts.hpp"
#include "results/store/case_queries.hpp"
#include "results/store/meta.hpp"
#include "results/store/reclaim_actions.hpp"
#include "results/store/schedule.hpp"
#include "results/store/telemetry.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>

namespace harness::campaign {

namespace {

/// Cases per schedule.state.
struct StateCounts {
  std::int64_t planned = 0, completed = 0, infra_failed = 0, pending = 0, lost = 0;
  void add(const std::string& state) {
    ++planned;
    completed += state == kCompletedStatus;
    infra_failed += state == kInfraFailedStatus;
    pending += state == kPendingState;
    lost += state == kLostStatus;
  }
};

std::string duration_text(double s) {
  const auto t = static_cast<long long>(s + 0.5);
  if (t < 60) return fmt::format("{} s", t);
  if (t < 3600) return fmt::format("{} min {:02d} s", t / 60, static_cast<int>(t % 60));
  return fmt::format("{} h {:02d} min", t / 3600, static_cast<int>((t % 3600) / 60));
}

using harness::text::utc_text;

}  // namespace

std::string progress_lines(results::Db& db, std::int64_t now) {
  const auto span = results::attempt_span(db, kInflightStatus);
  if (!span.first_started_unix_ns) return "elapsed: nothing started yet\n";
  const std::int64_t first = *span.first_started_unix_ns;
  const std::int64_t last = span.last_ended_unix_ns.value_or(first);
  const bool running = span.in_flight > 0;
  // Finished cases: the duration of the attempt that produced their outcome.
  const auto fin = results::finished_attempts(db, kCompletedStatus, kLostStatus);
  const std::int64_t finished = fin.count;
  std::map<std::string, std::int64_t> pending_per_vm;
  for (const auto& r : results::read_schedule(db))
    if (r.state == kPendingState) ++pending_per_vm[r.vm];
  std::int64_t pending = 0, most = 0, vms = 0;
  for (const auto& [vm, n] : pending_per_vm) {
    pending += n;
    most = std::max(most, n);
    ++vms;
  }
  std::string out;
  if (pending == 0 && !running) {
    out += fmt::format("elapsed: {} from the first attempt's start ({}) to the last end ({})\n",
                       duration_text((last - first) / 1e9), utc_text(first), utc_text(last));
    if (finished) out += fmt::format("a finished case took {} on average\n", duration_text(fin.mean_ns ? *fin.mean_ns / 1e9 : 0));
    return out;
  }
  out += fmt::format("elapsed: {} since the first attempt started ({})\n", duration_text((now - first) / 1e9),
                     utc_text(first));
  if (finished == 0 || !fin.mean_ns) {
    out += fmt::format("ETA: not known yet (no case finished; {} pending)\n", pending);
    return out;
  }
  const double mean_s = static_cast<double>(*fin.mean_ns) / 1e9;
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
  for (const char* key : {"name", "schedule_sha256"})  // in key order
    if (const auto v = results::meta_value(db, key)) out += fmt::format("{}: {}\n", key, *v);
  return out;
}

/// Cases per state and attempts counted as the report counts them (analysis/data/attempts_audit.hpp):
/// finished runs; in-flight rows, interrupted runs and operator actions apart.
std::string count_lines(results::Db& db, const std::vector<analysis::AttemptRow>& attempts) {
  const auto n = analysis::count_attempts(attempts);
  StateCounts k;
  for (const auto& r : results::read_schedule(db)) k.add(r.state);
  return fmt::format(
      "cases: {} planned, {} completed, {} lost, {} infra_failed, {} pending; {} attempts ({} reruns), {} in "
      "flight, {} interrupted before reaching an agent, {} operator actions\n",
      k.planned, k.completed, k.lost, k.infra_failed, k.pending, n.attempts, n.reruns, n.in_flight, n.interrupted,
      n.operator_actions);
}

/// Cases per state of each VM.
std::string per_vm_lines(results::Db& db) {
  std::map<std::string, StateCounts> per_vm;  // by VM name
  for (const auto& r : results::read_schedule(db)) per_vm[r.vm].add(r.state);
  std::string out;
  for (const auto& [vm, k] : per_vm)
    out += fmt::format("  {}: {} planned, {} completed, {} lost, {} infra_failed, {} pending\n", vm, k.planned,
                       k.completed, k.lost, k.infra_failed, k.pending);
  return out;
}

/// VMs an agent marked unusable after an unclean restoration (runner.hpp RunSummary::unusable).
std::string unusable_lines(results::Db& db) {
  std::string out;
  for (const auto& [vm, why] : results::unusable_marks(db)) out += fmt::format("  {} UNUSABLE: {}\n", vm, why);
  return out;
}

/// Lost after the pressure phase started: outcomes, never rerun (PROTOCOL.md).
std::string lost_lines(results::Db& db) {
  std::vector<std::string> lines;
  for (const auto& [id, outcome] : results::scheduled_outcomes(db, kLostStatus)) {
    const auto j = harness::json::parse_or_discarded(outcome.value_or("{}"));
    const auto lost = j.is_object() && j.contains("lost") ? j["lost"] : nlohmann::json::object();
    lines.push_back(fmt::format("  {} (phase {}): {}\n", id,
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
  std::vector<std::string> lines;
  for (const auto& a : results::in_flight_attempts(db, kInflightStatus))
    lines.push_back(fmt::format("  {} (attempt {}, phase {}, runner pid {})\n", a.case_id, a.attempt,
                                a.phase.value_or("not seen"), a.runner_pid.value_or("?")));
  return with_header("in flight (a runner is running, or was interrupted: `harness run` takes these over):\n", lines);
}

/// Attempts taken over from an interrupted runner (audit trail).
std::string takeover_lines(results::Db& db) {
  std::vector<std::string> lines;
  for (const auto& a : results::adopted_attempts(db, kInflightStatus))
    lines.push_back(fmt::format("  {} (attempt {}): {}, {} takeover(s)\n", a.case_id, a.attempt, a.status,
                                a.takeovers.value_or(0)));
  return with_header("taken over after the runner was interrupted:\n", lines);
}

/// Operator retry-budget resets (audit trail).
std::string reset_infra_lines(results::Db& db) {
  std::vector<std::string> lines;
  for (const auto& a : results::operator_actions(db, "reset-infra"))
    lines.push_back(fmt::format("  {} (attempt {}): by {}: {}\n", a.case_id, a.attempt, a.operator_name.value_or("?"),
                                a.reason.value_or("")));
  return with_header("reset-infra (operator restarted the retry budget):\n", lines);
}

/// Operator reclassifications (audit trail).
std::string mark_infra_lines(results::Db& db) {
  std::vector<std::string> lines;
  for (const auto& a : results::operator_actions(db, "mark-infra")) {
    const auto j = harness::json::parse_or_discarded(a.detail_json.value_or("{}"));
    auto str = [&](const char* k) {
      return j.is_object() && j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string("?");
    };
    const bool overridden = str("previous_status") == "completed" || str("previous_status") == "lost";
    lines.push_back(fmt::format("  {} (attempt {}): was {}{}, by {}: {}\n", a.case_id, a.attempt,
                                str("previous_status"), overridden ? " (outcome overridden)" : "", str("operator"),
                                str("reason")));
  }
  return with_header("mark-infra (operator reclassified as infra_failed):\n", lines);
}

/// Cases whose retry budget ran out: their attempts and the last attempt's error.
std::string infra_failed_lines(results::Db& db, const std::vector<analysis::AttemptRow>& attempts) {
  std::vector<std::string> lines;
  for (const auto& r : results::read_schedule(db)) {
    if (r.state != kInfraFailedStatus) continue;
    std::vector<analysis::AttemptRow> mine;
    for (const auto& a : attempts)
      if (a.case_id == r.case_id) mine.push_back(a);
    lines.push_back(fmt::format("  {} ({} attempts): {}\n", r.case_id, analysis::count_attempts(mine).attempts,
                                results::last_attempt_error(db, r.case_id).value_or("")));
  }
  return with_header("infra_failed:\n", lines);
}

/// The first five pending cases in schedule order.
std::string next_pending_lines(results::Db& db) {
  std::vector<std::string> lines;
  for (const auto& r : results::read_schedule(db))
    if (r.state == kPendingState && lines.size() < 5) lines.push_back("  " + r.case_id + "\n");
  return with_header("next pending:\n", lines);
}

/// Outcomes that are kept as they are (study): OOM and failed/partial reclaim.
std::string kept_outcome_lines(results::Db& db) {
  return fmt::format("completed outcomes kept: {} case(s) with OOM kills, {} reclaim write(s) with errno != 0\n",
                     results::cases_with_oom_kills(db), results::failed_reclaim_writes(db));
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
