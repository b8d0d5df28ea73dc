// The runner lock (see runner_lock.hpp).
#include "harness/campaign/runner/runner_lock.hpp"

#include "harness/campaign/model/campaign.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace harness::campaign {

RunnerLock::RunnerLock(const std::string& db_path) : path_(db_path + ".runner.lock") {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw CampaignError(path_ + ": cannot open the runner lock: " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    const auto n = ::pread(fd_, buf, sizeof buf - 1, 0);
    ::close(fd_);
    throw CampaignError(db_path + ": another `harness run` (pid " + (n > 0 ? std::string(buf, n) : "?") +
                        ") is running this campaign DB; wait for it to finish or stop it first");
  }
  // The pid is only for the refusal's message: a lock without it still excludes ("pid ?").
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
}

RunnerLock::~RunnerLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace harness::campaign
