// The silence bookkeeping of one attempt (see silence_log.hpp).
#include "harness/campaign/runner/silence_log.hpp"

#include <algorithm>

namespace harness::campaign {

SilenceLog::Clock::duration SilenceLog::start_offset(Clock::time_point asked, Clock::time_point now,
                                                     std::chrono::milliseconds held) {
  return std::min(now - asked, std::chrono::duration_cast<Clock::duration>(held));
}

std::chrono::milliseconds SilenceLog::silent_for(Clock::time_point now) const {
  if (!since_) return std::chrono::milliseconds(0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(now - *since_);
}

void SilenceLog::open_episode(nlohmann::json& detail, const std::string& phase, const std::string& error,
                              Clock::time_point steady, std::int64_t unix_ns, std::int64_t deadline_unix_ns) {
  since_ = steady;
  since_unix_ns_ = unix_ns;
  last_liveness_.clear();
  auto& sj = detail["silence"];
  if (!sj.is_object()) sj = nlohmann::json::object();
  if (!sj.contains("episodes")) sj["episodes"] = nlohmann::json::array();
  sj["deadline_unix_ns"] = deadline_unix_ns;
  sj["episodes"].push_back({{"start_unix_ns", unix_ns},
                            {"end_unix_ns", nullptr},
                            {"seconds", nullptr},
                            {"phase", phase.empty() ? nlohmann::json(nullptr) : nlohmann::json(phase)},
                            {"first_error", error},
                            {"liveness", nlohmann::json::array()}});
}

std::int64_t SilenceLog::close_episode(nlohmann::json& detail, std::int64_t now_unix_ns) {
  auto& e = detail["silence"]["episodes"].back();
  e["end_unix_ns"] = now_unix_ns;
  e["seconds"] = static_cast<double>(now_unix_ns - since_unix_ns_) / 1e9;
  since_.reset();
  return (now_unix_ns - since_unix_ns_) / 1'000'000LL;
}

bool SilenceLog::note_liveness(nlohmann::json& detail, const std::string& answer, std::int64_t t_unix_ns) {
  if (answer == last_liveness_) return false;
  detail["silence"]["episodes"].back()["liveness"].push_back({{"t_unix_ns", t_unix_ns}, {"answer", answer}});
  last_liveness_ = answer;
  return true;
}

void SilenceLog::note_boot_id(nlohmann::json& detail, const std::string& id) {
  if (id.empty()) return;
  auto& ids = detail["silence"]["boot_ids_seen"];
  if (!ids.is_array()) ids = nlohmann::json::array();
  for (const auto& x : ids)
    if (x == id) return;
  ids.push_back(id);
}

}  // namespace harness::campaign
