#pragma once
// The unclean mark (harness/agent/API.md "Unclean restoration"): <state-dir>/unclean.json
// {"case_id","problems":[...],"marked_unix_s"}, written durably before the case's result is
// reported, when a finished case's restoration was unclean or unknown. Until it is cleared
// (DELETE /v1/unclean, or the file removed) every submission gets 412. A mark that cannot
// be written is kept in memory with "not_written": "<why>" and refuses cases the same way.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <mutex>
#include <string>

#include "harness/error/expected.hpp"

namespace harness::agent {

class UncleanMark {
 public:
  /// The mark of the agent whose state directory is `state_dir`.
  explicit UncleanMark(const std::filesystem::path& state_dir);

  /// The mark: the one that could not be written, else unclean.json (read without
  /// blocking; a file that is not a regular file, unreadable or not a JSON object reads as
  /// a mark whose problems say so, case_id null), else null.
  nlohmann::json read() const;

  /// The mark that could not be written (null = none); no file is read.
  nlohmann::json held_in_memory() const;

  /// Marks the VM unusable because of case `case_id` with `problems` (a JSON array), durably
  /// (write_file_durably). When that fails, the mark is kept in memory with "not_written"
  /// and the failure is logged on stderr. Never throws.
  void write(const std::string& case_id, const nlohmann::json& problems);

  /// Outcome of clear().
  enum class Cleared { Done, NotMarked };
  /// DELETE /v1/unclean: removes the file and forgets an in-memory mark. `mark` receives the
  /// mark that was cleared; the Problem (the system's message) when the file cannot be removed.
  Expected<Cleared> clear(nlohmann::json& mark);

  /// The 412 text for `mark`: "VM unusable: the restoration of case X was unclean (p1; p2);
  /// fix the VM (or reboot it), then clear the mark with DELETE /v1/unclean", and a mark held
  /// in memory says that it could not be written, and what kept it from disk.
  static std::string message(const nlohmann::json& mark);
  /// The same without "VM unusable: ": "the restoration of case X was unclean (...); fix the
  /// VM (or reboot it), then clear the mark with DELETE /v1/unclean" (the one place the
  /// sentence is built: the agent's 412 and health refusal, and the runner's UNUSABLE line).
  static std::string reason(const nlohmann::json& mark);
  /// reason() of the mark a GET /v1/health answer carries ("unclean"); "" when it carries
  /// none (null, absent: also an agent older than the mark).
  static std::string reason_in_health(const nlohmann::json& health);

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  mutable std::mutex mu_;
  nlohmann::json not_written_;  ///< under mu_
};

}  // namespace harness::agent
