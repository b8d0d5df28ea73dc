#pragma once
// What the transport and a request handler tell each other about the current request, on the
// connection's thread: the handler marks the body read or the connection to be closed; the
// transport reports a body that passed its deadline, its raw-byte budget or its framing check
// (guarded_server.hpp; API.md "Limits").
#include <string>

namespace harness::agent {

/// For a request handler, on the connection's thread: the current request's body has been
/// read completely, so the connection may carry a next request.
void mark_body_consumed();
/// For a request handler that refused a request: close the connection after this answer
/// and read nothing more of it.
void close_after_response();
/// For a request handler whose body read failed: true when the transport stopped waiting
/// for the body at the body deadline (a slow drip: 408), false for any other failure.
bool body_deadline_passed();
/// For a request handler whose body read failed: true when the body took more raw bytes
/// on the wire than raw_body_limit (chunk framing included; e.g. 500,000 one-byte chunks
/// under a 1 MiB limit: 400).
bool body_over_raw_limit();

/// What the transport's framing check found in the current request's body.
struct BodyFraming {
  enum class Verdict {
    Fine,       ///< nothing refused (so far)
    Malformed,  ///< a chunk line or chunk end breaks RFC 9112 section 7.1 (400)
    TooLarge,   ///< the chunk sizes declared add up to more than the body limit (413)
  };
  Verdict verdict = Verdict::Fine;
  std::string why;  ///< the rule broken (chunk_framing.hpp), for the answer
};

/// For a request handler whose body read failed: what the framing check refused, if
/// anything (Verdict::Fine otherwise, and outside a request).
BodyFraming body_framing();

/// What a handler said about the request it answered (mark_body_consumed, close_after_response).
struct RequestFlags {
  bool body_consumed = false;
  bool close_after = false;
  bool body_timed_out = false;  // a body read waited past the body deadline
  bool body_over_budget = false;  // a body read went past raw_body_limit
  BodyFraming framing;            // what the framing check refused of the body, if anything
};

/// The current request's flags on this connection's thread: set by the connection guard while
/// httplib processes a request (connection_guard.hpp), nullptr outside a request.
extern thread_local RequestFlags* tl_flags;

}  // namespace harness::agent
