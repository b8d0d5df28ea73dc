#pragma once
// One runner per campaign DB (runner.hpp "Takeover"): an flock on DB + ".runner.lock" that
// the kernel releases when the process dies (kill -9 included), holding the runner's pid
// for the refusal of a second one.
#include <string>

namespace harness::campaign {

class RunnerLock {
 public:
  /// Takes the lock of `db_path`. Throws CampaignError when the lock file cannot be opened,
  /// or when another runner holds it (naming that runner's pid, "?" when unreadable). The
  /// fd is close-on-exec, so no program an engine starts (a daemonized hypervisor) keeps it.
  explicit RunnerLock(const std::string& db_path);
  ~RunnerLock();
  RunnerLock(const RunnerLock&) = delete;
  RunnerLock& operator=(const RunnerLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace harness::campaign
