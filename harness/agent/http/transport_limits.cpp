// Transport and limits of the agent (see transport_limits.hpp).
#include "harness/agent/http/transport_limits.hpp"

#include "harness/agent/http/answer.hpp"
#include "harness/agent/http/body_reader.hpp"
#include "harness/agent/http/guarded_server.hpp"
#include "harness/agent/client/loopback.hpp"

#include <unistd.h>

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <utility>

namespace harness::agent {
namespace {

/// The TLS server for `o` (both files given and readable, a usable pair).
std::unique_ptr<httplib::Server> make_tls_server(const AgentOptions& o, const ConnectionLimits& limits,
                                                 std::function<void()>& deepen) {
  if (o.tls_cert_file.empty() || o.tls_key_file.empty())
    throw std::runtime_error("--tls-cert and --tls-key go together (got only " +
                             std::string(o.tls_cert_file.empty() ? "--tls-key" : "--tls-cert") + ")");
  for (const auto& [flag, file] : {std::pair{"--tls-cert", o.tls_cert_file}, std::pair{"--tls-key", o.tls_key_file}})
    if (::access(file.c_str(), R_OK) != 0) throw std::runtime_error(std::string(flag) + " " + file + ": cannot read");
  auto s = std::make_unique<GuardedSslServer>(o.tls_cert_file.c_str(), o.tls_key_file.c_str(), limits);
  if (!s->is_valid())
    throw std::runtime_error("--tls-cert " + o.tls_cert_file + " / --tls-key " + o.tls_key_file +
                             ": not a usable PEM certificate and matching private key");
  deepen = [p = s.get()] { p->deepen_backlog(); };
  return s;
}

void refuse_and_close(httplib::Response& res, int status, const std::string& msg) {
  close_after_response();
  res.set_header("Connection", "close");
  send_error(res, status, msg, "");
}

}  // namespace

std::unique_ptr<httplib::Server> make_http_server(const AgentOptions& o, std::function<void()>& deepen) {
  ConnectionLimits limits = o.limits;
  limits.max_body_bytes = o.max_body_bytes;
  limits.body_deadline_ms = o.body_deadline_s * 1000;
  if (!o.tls_cert_file.empty() || !o.tls_key_file.empty()) return make_tls_server(o, limits, deepen);
  if (!is_loopback_address(o.bind) && !o.insecure_plain_http)
    throw std::runtime_error("--bind " + o.bind +
                             ": refusing plain HTTP on a non-loopback address (the bearer token would "
                             "cross the network in clear text); give --tls-cert and --tls-key, or "
                             "--insecure-plain-http for a network you trust");
  auto s = std::make_unique<GuardedServer>(limits);
  deepen = [p = s.get()] { p->deepen_backlog(); };
  return s;
}

bool has_body_framing(const httplib::Request& req) {
  return req.has_header("Content-Length") || req.has_header("Transfer-Encoding");
}

bool refuse_declared_length(const httplib::Request& req, httplib::Response& res, std::size_t max_body) {
  if (req.get_header_value<std::uint64_t>("Content-Length") <= max_body) return false;
  refuse_and_close(res, 413,
                   "request body too large (Content-Length above the limit of " + std::to_string(max_body) + " bytes)");
  return true;
}

bool refuse_body_before_reading(const httplib::Request& req, httplib::Response& res, std::size_t max_body) {
  const bool body = req.has_header("Transfer-Encoding") || req.get_header_value<std::uint64_t>("Content-Length") > 0;
  if (req.method != "POST" && body) {
    refuse_and_close(res, 413, "request body not accepted on " + req.method);
    return true;
  }
  return refuse_declared_length(req, res, max_body);
}

bool read_request_body(const httplib::ContentReader& reader, httplib::Response& res, std::size_t max_body,
                       int deadline_s, std::string& body) {
  BodyRead r = read_body_limited(reader, max_body, std::chrono::seconds(deadline_s), body);
  if (r.status == 0) {
    mark_body_consumed();
    return true;
  }
  if (const BodyFraming f = body_framing(); r.status == 400 && f.verdict != BodyFraming::Verdict::Fine) {
    const bool too_large = f.verdict == BodyFraming::Verdict::TooLarge;
    r.status = too_large ? 413 : 400;
    r.message = too_large ? f.why : "malformed chunked body (RFC 9112 section 7.1): " + f.why;
  } else if (r.status == 400 && body_deadline_passed()) {
    r.status = 408;
    r.message = "request body not received within " + std::to_string(deadline_s) + " s";
  } else if (r.status == 400 && body_over_raw_limit()) {
    r.message = "request body takes more than " + std::to_string(raw_body_limit(max_body)) +
                " bytes on the wire, chunk framing included (limit: 2 x the body limit + 64 KiB)";
  }
  refuse_and_close(res, r.status, r.message);  // the rest of an unread body is never parsed as a request
  return false;
}

void install_transport_answers(httplib::Server& http, RefuseUnread refuse_unread) {
  // Expect: 100-continue (curl sends it for bodies above 1 MiB): every refusal of a request
  // before its body is read comes instead of the 100, so that no body is invited that will
  // not be read (a request without the token got "100 Continue", then 401). httplib writes
  // this answer from `res` without routing it, so without the Content-Length it adds to
  // routed answers (and left at -1 its status read "HTTP/1.1 -1").
  http.set_expect_100_continue_handler([refuse_unread](const httplib::Request& req, httplib::Response& res) {
    if (!refuse_unread(req, res)) return 100;
    res.set_header("Content-Length", std::to_string(res.body.size()));
    return res.status;
  });
  http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const std::string msg = res.status == 413   ? "request body too large"
                            : res.status == 404 ? "no such path"
                                                : "HTTP error " + std::to_string(res.status);
    send_error(res, res.status, msg, "");
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string msg = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      msg += std::string(": ") + e.what();
    } catch (...) {
      msg += ": an exception that is not a std::exception";
    }
    send_error(res, 500, msg, "");
  });
}

}  // namespace harness::agent
