#pragma once
// Files the agent's guarantees rest on (the unclean mark, a case's status), written so
// that a crash or power loss leaves either the old or the new content, never a torn or
// empty file, and so that every failing step is reported instead of being lost.
#include <filesystem>
#include <optional>
#include <string>

namespace harness::case_ {

/// Writes `content` to `path`: `<path>.tmp` is created (O_NOFOLLOW: a symlink there is
/// refused, not followed), written in full, fsync()ed and closed, renamed over `path`,
/// then the directory is fsync()ed. Throws std::runtime_error naming the step, the file
/// and errno's text ("fsync /var/lib/harness/agent/unclean.json.tmp: No space left on
/// device"); the temporary file is removed on failure.
void write_file_durably(const std::filesystem::path& path, const std::string& content);

/// Reads at most `max_bytes` of a regular file: nullopt when it does not exist; throws
/// std::runtime_error naming the file when it cannot be read, is not a regular file (a
/// FIFO, a device, a directory: opened without blocking, then refused) or is larger than
/// `max_bytes`.
std::optional<std::string> read_small_file(const std::filesystem::path& path, std::size_t max_bytes);

}  // namespace harness::case_
