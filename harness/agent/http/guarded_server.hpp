#pragma once
// The agent's HTTP(S) transport: cpp-httplib's Server and SSLServer with the connection
// limits that the installed httplib (Debian 12: 0.11.4, a compiled library) lacks.
//
// httplib 0.11 serves each connection on one of 8 pool threads with a 5 s timeout per
// read but no deadline for a request's head, no limit on its header count (a header line
// is buffered whole, every header is kept), a TLS handshake paced by the client, and a
// refused body that is read to its end or parsed as further requests. So the agent owns
// every accepted socket (process_and_close_socket, a virtual of httplib::Server) and
// hands httplib only a complete, checked request head:
//
//   accept -> per-address and total connection limits: when full, the connection that
//             has waited longest for a request head is closed to make room (from the
//             same address when that address is full); 503 and closed only when every
//             slot concerned is inside a request
//          -> TLS handshake within the head deadline
//          -> request line METHOD SP TARGET SP HTTP/1.0 or HTTP/1.1 (else 400, closed:
//             no HTTP/0.9 line or HTTP/2 preface reaches httplib)
//          -> request line + headers read by the guard within the head deadline, at most
//             max_head_bytes and max_header_lines, no NUL or other control byte, no bare
//             LF, no '%' in a header value (httplib decodes %XX there: a percent-encoded
//             bearer token matched), framing (Content-Length / Transfer-Encoding: chunked)
//             unambiguous (else 408 / 431 / 400, closed)
//          -> a Range header line is dropped (the agent serves no ranges; httplib would
//             match it with a backtracking regex and build a multipart answer in memory)
//          -> httplib parses the rest;
//             httplib routes it; the body is read through the guard, at most
//             2 x max_body_bytes + 64 KiB of raw bytes (framing included) within the body
//             deadline, and only as far as its framing goes: nothing without Content-Length
//             or Transfer-Encoding (an empty body, RFC 9112 section 6.3, not a read until the
//             client closes), the declared length, or a chunked body checked byte by byte
//             (chunk_framing.hpp: a malformed chunk line or chunk end is refused at once)
//          -> after a request whose body or head was not read completely (refused,
//             413, 404, a header line httplib refused...) the connection is closed:
//             nothing after it is parsed as a request.
//
// Connections run on their own threads (up to max_connections + 16 at once), so a slow
// client holds one thread for at most the head deadline and never delays another client.
// Rules and defaults: ours (harness/agent/API.md "Limits").
#include "harness/agent/http/connection_limits.hpp"
#include "harness/agent/http/request_flags.hpp"  // what a handler and the transport say of a request

#include <httplib.h>

#include <memory>
#include <string>

namespace harness::agent {

class ConnectionGuard;

/// httplib::Server behind the guard (plain HTTP).
class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(const ConnectionLimits& limits);
  ~GuardedServer() override;
  /// After bind_to_port / bind_to_any_port: a deeper listen backlog (httplib's is 5).
  void deepen_backlog(int backlog = 128);

 private:
  bool process_and_close_socket(socket_t sock) override;
  std::shared_ptr<ConnectionGuard> guard_;
};

/// httplib::SSLServer behind the guard (HTTPS; the handshake runs under the head deadline).
class GuardedSslServer : public httplib::SSLServer {
 public:
  GuardedSslServer(const char* cert_path, const char* key_path, const ConnectionLimits& limits);
  ~GuardedSslServer() override;
  void deepen_backlog(int backlog = 128);

 private:
  bool process_and_close_socket(socket_t sock) override;
  std::shared_ptr<ConnectionGuard> guard_;
};

}  // namespace harness::agent
