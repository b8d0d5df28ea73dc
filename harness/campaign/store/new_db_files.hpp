#pragma once
// The files a run creates for its campaign DB, so that a run refused before its first case can
// leave the machine as it found it (`harness run FILE DB` refused for the guests' kernel: DB
// gone, the same command runs once the kernel is right). Never a file that existed before.
#include <string>
#include <vector>

namespace harness::campaign {

/// Remembers which of the files of the campaign DB at `db_path` (the DB, its -wal and -shm,
/// and the runner lock `<db>.runner.lock`) do not exist when it is made.
class NewDbFiles {
 public:
  explicit NewDbFiles(const std::string& db_path);

  /// Removes the files remembered as absent. Returns true when the DB file was one of them
  /// (this run created it) and is gone now; false when it existed before (nothing removed) or
  /// could not be removed. Never throws.
  bool discard() const;

 private:
  std::string db_path_;
  std::vector<std::string> absent_;
};

}  // namespace harness::campaign
