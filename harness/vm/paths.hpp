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

}  // namespace harness::vm
