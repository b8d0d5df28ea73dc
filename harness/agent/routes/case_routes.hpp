#pragma once
// GET /v1/cases/{id} (optionally waiting for a change), GET /v1/cases/{id}/bundle and
// POST /v1/cases/{id}/cancel (harness/agent/API.md): every id is checked before any file
// is touched.
#include "harness/agent/cases/executor_watcher.hpp"
#include "harness/agent/cases/registry.hpp"

#include <httplib.h>

namespace harness::agent {

/// GET /v1/cases/{id}?wait_ms=: the longest wait a request may ask for, ms (API.md).
inline constexpr int kMaxStatusWaitMs = 60000;

/// Answers a request under /v1/cases/: 400 bad id (or bad wait_ms / missing state or phase
/// beside it, naming the field), 405 a method that does not fit the path, 404 unknown
/// case; then the status, the cancel (202 with the status; ExecutorWatcher::cancel), or the
/// bundle (409 while not final; serve_bundle).
void serve_case_path(Registry& reg, ExecutorWatcher& watcher, const httplib::Request& req, httplib::Response& res);

}  // namespace harness::agent
