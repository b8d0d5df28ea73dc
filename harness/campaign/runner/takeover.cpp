// Taking over an interrupted runner's attempt (see takeover.hpp).
#include "harness/campaign/runner/takeover.hpp"

namespace harness::campaign {

namespace {

nlohmann::json field_or_null(const nlohmann::json& d, const char* key) {
  return d.contains(key) ? d[key] : nlohmann::json();
}

}  // namespace

TakenOver take_over(AttemptRecord row, const std::string& host, const std::string& fallback_agent_id, int pid,
                    std::int64_t now_unix_ns) {
  TakenOver t;
  nlohmann::json d = row.detail.is_object() ? row.detail : nlohmann::json::object();
  t.agent_id = d.contains("agent_case_id") && d["agent_case_id"].is_string() ? d["agent_case_id"].get<std::string>()
                                                                             : fallback_agent_id;
  d["runner_interrupted"] = true;
  if (!d.contains("takeovers") || !d["takeovers"].is_array()) d["takeovers"] = nlohmann::json::array();
  d["takeovers"].push_back({{"took_over_unix_ns", now_unix_ns},
                            {"runner_pid", pid},
                            {"interrupted_runner_pid", field_or_null(d, "runner_pid")},
                            {"phase_seen_before", field_or_null(d, "phase")},
                            {"last_seen_unix_ns", field_or_null(d, "last_seen_unix_ns")}});
  d["runner_pid"] = pid;
  if (d.contains("phase") && d["phase"].is_string()) t.seen.phase = d["phase"].get<std::string>();
  if (d.contains("last_seen_unix_ns") && d["last_seen_unix_ns"].is_number_integer())
    t.seen.last_seen_unix_ns = d["last_seen_unix_ns"].get<std::int64_t>();
  t.seen.submitted_unix_ns = d.contains("submitted_unix_ns") && d["submitted_unix_ns"].is_number_integer()
                                 ? d["submitted_unix_ns"].get<std::int64_t>()
                                 : row.started_unix_ns;
  t.submitted = d.value("submitted", false);
  row.host = host;
  row.detail = std::move(d);
  row.kind = "adopted";
  t.rec = std::move(row);
  return t;
}

std::string takeover_note(const TakenOver& t, std::int64_t now_unix_ns) {
  return "taking over " + t.agent_id + " (attempt " + std::to_string(t.rec.attempt) + ", started " +
         std::to_string((now_unix_ns - t.rec.started_unix_ns) / 1'000'000'000LL) + " s ago) from an interrupted runner" +
         (t.seen.phase.empty() ? "" : " (last phase seen: " + t.seen.phase + ")");
}

}  // namespace harness::campaign
