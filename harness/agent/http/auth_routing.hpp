#pragma once
// Authentication and routing (harness/agent/API.md): the bearer token on every path but
// GET /v1/health, the paths the agent serves by method, and the parts of a
// /v1/cases/{id}[/bundle|/cancel] path. All of it is judged before a body is read.
#include <httplib.h>

#include <string>
#include <string_view>

namespace harness::agent {

/// True for the paths the agent serves with `method`: GET /v1/health, /v1/qualification,
/// /v1/cases/...; POST /v1/cases, /v1/reboot, /v1/cases/...; DELETE /v1/unclean.
bool known_route(const std::string& method, const std::string& path);

/// True when the request carries exactly one Authorization header, without a NUL (the
/// library's string accessors would stop at one), that is "Bearer <token>" (bearer_ok).
bool authorised(const httplib::Request& req, std::string_view token);

/// Before routing, after the transport's checks: GET /v1/health passes; a request that is
/// not authorised gets 401 (WWW-Authenticate: Bearer), an unknown path 404; either closes
/// the connection after the answer when the request announced a body. True when answered.
bool refuse_unauthorised_or_unknown(const httplib::Request& req, httplib::Response& res, std::string_view token);

/// What a path under /v1/cases/ asks for.
enum class CaseAction { Status, Bundle, Cancel };

/// A path under /v1/cases/ split: `id` as written (not yet checked: safe_case_id) and the
/// action its suffix names ("/bundle", "/cancel"; none = Status).
struct CasePath {
  std::string id;
  CaseAction action = CaseAction::Status;
};

/// Splits `path`, which starts with "/v1/cases/". A suffix alone ("/v1/cases//cancel") is
/// not split off: the id is then "/cancel" and fails the id check.
CasePath split_case_path(const std::string& path);

/// True when `action` may be asked with `method`: Cancel with POST, the others with GET.
bool method_fits(CaseAction action, const std::string& method);

}  // namespace harness::agent
