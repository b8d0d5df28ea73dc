#pragma once
// What the agent says about its VM (harness/agent/API.md): GET /v1/health, which needs no
// token and never waits for a case's files, and DELETE /v1/unclean, which clears the mark.
#include "harness/agent/cases/registry.hpp"
#include "harness/agent/cases/unclean_mark.hpp"

#include <httplib.h>

namespace harness::agent {

/// GET /v1/health: {"status":"ok","version","source_commit","busy","boot_id","unclean",
/// "accepting_cases","refusal"}: accepting_cases is false while the VM is marked unclean or
/// an earlier agent run's executor still runs (Busy::Holder::OldExecutor), and refusal
/// then says why (both reasons, "; " apart, when both hold).
void serve_health(Registry& reg, const UncleanMark& mark, httplib::Response& res);

/// DELETE /v1/unclean: 200 {"cleared": <the mark>}, 404 when not marked, 500 when the file
/// cannot be removed.
void serve_clear_unclean(UncleanMark& mark, httplib::Response& res);

}  // namespace harness::agent
