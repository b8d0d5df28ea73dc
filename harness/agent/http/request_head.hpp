#pragma once
// The rules a request head must keep before httplib sees it (guarded_server.hpp): the request
// line, each header line (no obs-fold, no '%' in a value, unambiguous framing), and the Range
// header lines the guard drops.
#include <string>
#include <string_view>

#include "harness/error/expected.hpp"

namespace harness::agent {

/// Result of reading one request head.
enum class Head { Ready, Closed, TooLarge, TooManyLines, Timeout, Malformed };

/// One request head read: its outcome, whether a body follows it (Ready), and the text of the
/// answer that refuses it (TooLarge, TooManyLines, Timeout, Malformed).
struct HeadRead {
  Head head = Head::Closed;
  bool has_body = false;
  std::string why;
};

/// The request line httplib can parse and the agent serves: three fields separated by
/// one space each, the method in capitals, the version HTTP/1.0 or HTTP/1.1. Anything
/// else (an HTTP/0.9 "GET /", the HTTP/2 preface "PRI * HTTP/2.0") is refused by the
/// guard with the connection closed: httplib's own 400 for it left what followed on the
/// connection to be parsed as a second request.
bool request_line_ok(std::string_view line);

/// One header line: rejects obs-fold, a '%' in a value and ambiguous framing (the Problem names
/// the rule broken); notes a Content-Length (`content_length`, `length` in bytes) or a chunked
/// Transfer-Encoding (`chunked`).
Checked check_header(std::string_view line, bool& content_length, bool& chunked, unsigned long long& length);

/// A "Range:" header line. The agent serves no byte ranges (API.md: a Range header is
/// ignored, RFC 9110 section 14.2 lets a server ignore it), and httplib must not see
/// one: it matches the header with a backtracking std::regex whose recursion touched
/// about 1-3 MiB of a connection thread's stack for 2,700 ranges in an 8 KB line (64 such
/// requests at once: a 64-187 MiB peak RSS), and then builds a multipart answer in
/// memory with one part per range (875 KB for GET /v1/health).
bool is_range(std::string_view line);

}  // namespace harness::agent
