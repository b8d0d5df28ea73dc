// The /v1/cases/{id} family (see case_routes.hpp).
#include "harness/agent/routes/case_routes.hpp"

#include "harness/agent/http/answer.hpp"
#include "harness/agent/http/auth_routing.hpp"
#include "harness/agent/routes/bundle_download.hpp"
#include "harness/agent/cases/case_id.hpp"

#include <chrono>
#include <string>

namespace harness::agent {
namespace {

/// GET /v1/cases/{id}, with or without ?wait_ms=W&state=S&phase=P.
void serve_status(Registry& reg, const std::shared_ptr<CaseRec>& c, const httplib::Request& req,
                  httplib::Response& res) {
  if (!req.has_param("wait_ms")) return send_json(res, reg.status_of(c));
  const std::string w = req.get_param_value("wait_ms");
  if (w.empty() || w.size() > 5 || w.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(w) > kMaxStatusWaitMs)
    return send_error(res, 400, "wait_ms must be an integer from 0 to " + std::to_string(kMaxStatusWaitMs) + " (ms)",
                      "wait_ms");
  for (const char* k : {"state", "phase"})
    if (!req.has_param(k))
      return send_error(res, 400, std::string("wait_ms needs state and phase (the status last seen); ") + k + " is missing", k);
  send_json(res, reg.status_when_changed(c, std::chrono::milliseconds(std::stoi(w)), req.get_param_value("state"),
                                         req.get_param_value("phase")));
}

/// GET /v1/cases/{id}/bundle.
void serve_case_bundle(Registry& reg, const std::shared_ptr<CaseRec>& c, httplib::Response& res) {
  CaseState state;
  std::filesystem::path b;
  {
    std::lock_guard<std::mutex> lk(reg.mu);
    state = c->state;
    b = bundle_path(*c);
  }
  const std::string name(state_name(state));
  if (!is_final(state)) return send_error(res, 409, "case " + c->id + " has not finished (state " + name + ")", "");
  serve_bundle(reg, c->id, name, b, res);
}

}  // namespace

void serve_case_path(Registry& reg, ExecutorWatcher& watcher, const httplib::Request& req, httplib::Response& res) {
  const CasePath p = split_case_path(req.path);
  if (!safe_case_id(p.id))
    return send_error(res, 400, "bad case id: must match [A-Za-z0-9._-]{1,128} and not be . or ..", "case_id");
  if (!method_fits(p.action, req.method)) return send_error(res, 405, "method not allowed for this path", "");
  auto c = reg.find_case(p.id);
  if (!c) return send_error(res, 404, "unknown case id " + p.id, "case_id");
  switch (p.action) {
    case CaseAction::Status: return serve_status(reg, c, req, res);
    case CaseAction::Cancel:
      // Honoured in every state before the final one: queued and qualifying (the executor
      // never starts), running (SIGTERM: the executor restores, then exits; SIGKILL only
      // after the grace), finishing (the final state becomes cancelled).
      watcher.cancel(c);
      return send_json(res, reg.status_of(c), 202);
    case CaseAction::Bundle: return serve_case_bundle(reg, c, res);
  }
}

}  // namespace harness::agent
