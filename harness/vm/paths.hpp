#pragma once
// Where the VM provider keeps its per-user cache and VM state.
#include <string>

namespace harness::vm {

/// The per-user cache root: `override_dir` when non-empty, else $XDG_CACHE_HOME/reclaim-harness,
/// else $HOME/.cache/reclaim-harness. Created (mode 0700) if missing; throws
/// std::runtime_error naming the directory when it cannot be created.
std::string cache_root(const std::string& override_dir = "");

/// Directory of the running executable (/proc/self/exe's parent).
std::string self_exe_dir();
/// Path of the running executable (/proc/self/exe resolved).
std::string self_exe();

/// Writes `data` to `path` atomically (temp file + rename) with the given mode bits.
/// Throws std::runtime_error naming the file.
void write_file(const std::string& path, const std::string& data, unsigned mode = 0644);
/// Reads a whole file. Throws std::runtime_error naming the file when unreadable.
std::string read_file(const std::string& path);

/// An exclusive lock on what is built into a cache directory (the kernel packages, the canary
/// DB, an image): flock on `lock_path`, held until destruction and released by the kernel when
/// the process dies. Two `harness vm image` runs that share a cache (or a folder linked from
/// several caches, as the guest tests share one per build tree) build it one after the other:
/// the second waits, saying so on stderr with `what`, then finds it built. Creates the parent
/// directory; throws std::runtime_error naming `lock_path` when it cannot be opened.
class CacheLock {
 public:
  CacheLock(const std::string& lock_path, const std::string& what);
  ~CacheLock();
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace harness::vm
