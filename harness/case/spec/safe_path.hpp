#pragma once
// The path rules of a spec and a campaign (ours): which host paths are safe to hand to the
// kernel and to workloads, and whether a path lies inside the directories an agent allows.
// Shared by parse_spec (spec.hpp), the A/B variants' sysfs knobs (variant.hpp), the campaign
// loader and the agent's submission.
#include <string>
#include <vector>

#include "harness/error/expected.hpp"

namespace harness::case_ {

/// Whether `path` (already safe: check_safe_path) lies inside one of the directories
/// `allowed` (absolute, e.g. the agent's data directory /var/lib/harness), or the Problem.
/// Inside = the lexically normal path starts with "<dir>/", and the path with what
/// exists of it resolved (symlinks followed; a new leaf appended, std::filesystem::weakly_canonical)
/// is inside the canonical dir as well; a dangling symlink anywhere along it is refused.
/// E.g. "is not under /var/lib/harness (allowed: /var/lib/harness)".
Checked check_path_inside(const std::string& path, const std::vector<std::string>& allowed);

/// Whether `path` is a safe absolute path, or the Problem. Safe (ours):
/// starts with '/', only the characters [A-Za-z0-9._/-], no "." or ".." component, at most
/// 4096 characters. Host paths of the spec and the campaign (backend.swapfile_path,
/// canaries.sqlite_db_path) must be safe: they reach swapon(2), workload argv and the fix
/// commands qualification prints. E.g. "contains ';' at offset 25 (allowed: A-Z a-z 0-9 . _ / -)".
Checked check_safe_path(const std::string& path);

}  // namespace harness::case_
