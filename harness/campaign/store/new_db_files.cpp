// The files a run creates for its campaign DB (see new_db_files.hpp).
#include "harness/campaign/store/new_db_files.hpp"

#include <filesystem>
#include <system_error>

namespace harness::campaign {

NewDbFiles::NewDbFiles(const std::string& db_path) : db_path_(db_path) {
  for (const char* suffix : {"", "-wal", "-shm", ".runner.lock"}) {
    std::error_code ec;
    const std::string p = db_path + suffix;
    if (!std::filesystem::exists(std::filesystem::symlink_status(p, ec))) absent_.push_back(p);
  }
}

bool NewDbFiles::discard() const {
  bool db_removed = false;
  for (const auto& p : absent_) {
    std::error_code ec;
    const bool removed = std::filesystem::remove(p, ec);
    if (p == db_path_) db_removed = removed && !ec;
  }
  return db_removed;
}

}  // namespace harness::campaign
