#pragma once
// The limits of the agent's HTTP transport (guarded_server.hpp; API.md "Limits"; ours).
#include <cstddef>

namespace harness::agent {

/// Limits of the transport (AgentOptions::limits; API.md "Limits").
struct ConnectionLimits {
  /// Request line + headers (over TLS: the handshake and the first request's head) must be
  /// complete within this of the connection's accept (first request) or of the request's
  /// first byte (later requests on a kept-alive connection), ms.
  int head_deadline_ms = 10000;
  std::size_t max_head_bytes = 16384;      ///< request line + headers, bytes
  std::size_t max_header_lines = 64;       ///< header lines after the request line
  std::size_t max_connections = 128;       ///< open connections, all clients together
  std::size_t max_connections_per_address = 16;  ///< open connections from one client address
  int idle_ms = 5000;                      ///< keep-alive: wait this long for the next request, ms
  std::size_t max_requests_per_connection = 100;
  int io_timeout_ms = 30000;               ///< a read or write making no progress for this long fails, ms
  std::size_t max_body_bytes = 1 << 20;    ///< the agent's body limit (decoded bytes)
  int body_deadline_ms = 30000;            ///< a whole request body, ms
};

/// The raw bytes a request body may take on the wire, chunk framing included, for a body
/// limit of `max_body_bytes` decoded bytes: 2 x the limit + 64 KiB (API.md "Limits"; ours).
constexpr std::size_t raw_body_limit(std::size_t max_body_bytes) { return 2 * max_body_bytes + 65536; }

}  // namespace harness::agent
