#pragma once
// GET /v1/cases/{id}/bundle (harness/agent/API.md): a finished case's bundle, streamed from
// the file as the client takes it (never held whole in memory), at most
// kMaxBundleDownloads at once.
#include "harness/agent/cases/registry.hpp"

#include <httplib.h>

#include <cstddef>
#include <filesystem>
#include <string>

namespace harness::agent {

/// Downloads served at once; beyond, 503 with Retry-After: 1 (API.md; ours: the runner
/// downloads one bundle per case, a retry may overlap a stale one).
inline constexpr std::size_t kMaxBundleDownloads = 2;

/// Answers the bundle `b` of the finished case `id` in `state` (for the 404 text): 503
/// beyond kMaxBundleDownloads (counted in reg.downloads until the answer is gone), 404 when
/// there is no file, 500 when it cannot be opened or is not a regular file (opened without
/// blocking), else 200 application/vnd.sqlite3 read with pread(2) 64 KiB at a time.
void serve_bundle(Registry& reg, const std::string& id, const std::string& state, const std::filesystem::path& b,
                  httplib::Response& res);

}  // namespace harness::agent
