#pragma once
// The silence bookkeeping of one attempt (docs/PROTOCOL.md "A silent agent"): the episodes
// of an agent that stopped answering, the engine's liveness answers during them and the
// boot ids seen, kept in the attempt's detail_json.silence for the operator and the lost
// rule (lost_rule.hpp). Pure: it edits the JSON it is given; the follower stores it.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace harness::campaign {

class SilenceLog {
 public:
  using Clock = std::chrono::steady_clock;

  /// When a silence that ended a request sent at `asked` (held up to `held` on purpose) began:
  /// when its answer was due (sent + held), or now if sooner; never while the agent was
  /// entitled to hold it. An offset from `asked`.
  static Clock::duration start_offset(Clock::time_point asked, Clock::time_point now, std::chrono::milliseconds held);

  bool open() const { return since_.has_value(); }
  /// Length of the open episode at `now`; 0 when none is open.
  std::chrono::milliseconds silent_for(Clock::time_point now) const;

  /// Opens an episode in `detail` (an object; silence.episodes created) that began at
  /// `steady` / `unix_ns`, with the last phase seen ("" = none, stored as null), the first
  /// error and the case's deadline (silence.deadline_unix_ns).
  void open_episode(nlohmann::json& detail, const std::string& phase, const std::string& error, Clock::time_point steady,
                    std::int64_t unix_ns, std::int64_t deadline_unix_ns);
  /// Closes the open episode at `now_unix_ns` (end_unix_ns, seconds); returns its length, ms.
  std::int64_t close_episode(nlohmann::json& detail, std::int64_t now_unix_ns);
  /// Records the engine's answer `answer` at `t_unix_ns` in the open episode when it differs
  /// from the last one recorded there; true when it was recorded.
  bool note_liveness(nlohmann::json& detail, const std::string& answer, std::int64_t t_unix_ns);
  /// Appends `id` to silence.boot_ids_seen when it is new there ("" is ignored).
  static void note_boot_id(nlohmann::json& detail, const std::string& id);

 private:
  std::optional<Clock::time_point> since_;
  std::int64_t since_unix_ns_ = 0;
  std::string last_liveness_;  ///< last engine answer recorded in the open episode
};

}  // namespace harness::campaign
