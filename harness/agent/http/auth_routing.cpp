// Authentication and routing (see auth_routing.hpp).
#include "harness/agent/http/auth_routing.hpp"

#include "harness/agent/http/answer.hpp"
#include "harness/agent/http/guarded_server.hpp"
#include "harness/agent/http/token.hpp"

#include <cstdint>

namespace harness::agent {
namespace {
constexpr std::string_view kCasesPrefix = "/v1/cases/";
}  // namespace

bool known_route(const std::string& method, const std::string& path) {
  const bool under_cases = path.rfind(kCasesPrefix, 0) == 0;
  if (method == "GET") return path == "/v1/health" || path == "/v1/qualification" || under_cases;
  if (method == "POST") return path == "/v1/cases" || path == "/v1/reboot" || under_cases;
  if (method == "DELETE") return path == "/v1/unclean";
  return false;
}

bool authorised(const httplib::Request& req, std::string_view token) {
  const auto auth = req.headers.find("Authorization");
  return auth != req.headers.end() && auth->second.find('\0') == std::string::npos &&
         req.headers.count("Authorization") == 1 && bearer_ok(auth->second, token);
}

bool refuse_unauthorised_or_unknown(const httplib::Request& req, httplib::Response& res, std::string_view token) {
  if (req.method == "GET" && req.path == "/v1/health") return false;
  const bool body = req.has_header("Transfer-Encoding") || req.get_header_value<std::uint64_t>("Content-Length") > 0;
  if (!authorised(req, token)) {
    if (body) close_after_response();
    res.set_header("WWW-Authenticate", "Bearer");
    send_error(res, 401, "missing or wrong bearer token", "");
    return true;
  }
  if (!known_route(req.method, req.path)) {
    if (body) close_after_response();
    send_error(res, 404, "no such path", "");
    return true;
  }
  return false;
}

CasePath split_case_path(const std::string& path) {
  CasePath p;
  p.id = path.substr(kCasesPrefix.size());
  for (const auto& [suffix, action] : {std::pair<std::string_view, CaseAction>{"/bundle", CaseAction::Bundle},
                                       {"/cancel", CaseAction::Cancel}}) {
    if (p.id.size() > suffix.size() && p.id.compare(p.id.size() - suffix.size(), suffix.size(), suffix) == 0) {
      p.id.resize(p.id.size() - suffix.size());
      p.action = action;
      break;
    }
  }
  return p;
}

bool method_fits(CaseAction action, const std::string& method) {
  return (action == CaseAction::Cancel) == (method == "POST");
}

}  // namespace harness::agent
