#pragma once
// Transport and limits of the agent (harness/agent/API.md "Limits"): which server serves
// (HTTP or HTTPS, the plain-HTTP rule), the body limits a handler applies before it reads a
// byte, the body read itself, and the answers httplib writes on its own (errors,
// exceptions, Expect: 100-continue). The connection guard below them is guarded_server.hpp.
#include "harness/agent/http/agent_options.hpp"

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace harness::agent {

/// The HTTP or HTTPS server for `o` behind the connection guard, with o.limits and the body
/// limit and deadline of `o` (max_body_bytes, body_deadline_s). `deepen` receives the
/// server's deepen_backlog (to call after bind). Throws std::runtime_error naming the flag:
/// plain HTTP on a non-loopback bind without insecure_plain_http, only one of --tls-cert
/// and --tls-key, either unreadable, or not a usable certificate and key.
std::unique_ptr<httplib::Server> make_http_server(const AgentOptions& o, std::function<void()>& deepen);

/// True when the request announces a body (Content-Length or Transfer-Encoding). A POST
/// with neither has no body (RFC 9112 section 6.3); httplib would instead read until the
/// client closes.
bool has_body_framing(const httplib::Request& req);

/// Before routing: a body on any method but POST (413: the library would read it whole),
/// or a declared Content-Length above `max_body` (413, nothing of it read). Answers, marks
/// the connection to close after the answer and returns true; else false.
bool refuse_body_before_reading(const httplib::Request& req, httplib::Response& res, std::size_t max_body);

/// A declared Content-Length above `max_body`: answers 413 (the connection closes after
/// it) and returns true; else false.
bool refuse_declared_length(const httplib::Request& req, httplib::Response& res, std::size_t max_body);

/// Reads the request body into `body` with the limit `max_body` (bytes received) and the
/// deadline `deadline_s` (body_reader.hpp). True when complete; otherwise the answer is set
/// (413 over the limit or chunk sizes declared above it, 408 slow drip, 400 a malformed
/// chunked body (guarded_server.hpp body_framing), raw bytes over raw_body_limit or a failed
/// read), the connection closes after it, and false is returned.
bool read_request_body(const httplib::ContentReader& reader, httplib::Response& res, std::size_t max_body,
                       int deadline_s, std::string& body);

/// The agent's refusals of a request before its body is read (body on a method but POST,
/// declared length, token, path): answers `res` and returns true when it refuses.
using RefuseUnread = std::function<bool(const httplib::Request&, httplib::Response&)>;

/// Installs the answers httplib writes without a handler: Expect: 100-continue (the
/// refusal of `refuse_unread` instead of the 100: 401, 404, 413; nothing is invited that
/// will not be read), the error answer of a status without a body, and 500
/// "internal error: ..." for a handler's exception.
void install_transport_answers(httplib::Server& http, RefuseUnread refuse_unread);

}  // namespace harness::agent
