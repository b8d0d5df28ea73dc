#pragma once
// One connection as httplib sees it (guarded_server.hpp): the request head read and checked by
// the guard into a buffer, then the body from the wire (plain or TLS, non-blocking, every wait
// bounded), only as far as its framing goes and within the raw body budget (API.md "Limits").
#include "harness/agent/http/chunk_framing.hpp"
#include "harness/agent/http/connection_limits.hpp"
#include "harness/agent/http/request_head.hpp"
#include "harness/agent/http/socket_wait.hpp"

#include <httplib.h>
#include <openssl/ssl.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace harness::agent {

/// How the current request's body is delimited (RFC 9112 section 6): none (no
/// Content-Length, no Transfer-Encoding, or a length of 0: the body is empty), a length, or
/// chunked.
enum class Framing { None, Length, Chunked };

/// One connection as httplib sees it: the checked head from the guard's buffer, then the
/// body from the wire (plain or TLS, non-blocking, every wait bounded).
class WireStream final : public httplib::Stream {
 public:
  WireStream(int fd, SSL* ssl, const ConnectionLimits& l, const std::atomic<socket_t>& listening)
      : fd_(fd), ssl_(ssl), l_(l), listening_(listening) {}

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, std::size_t size) override;
  ssize_t write(const char* ptr, std::size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

  bool failed() const { return failed_; }
  /// True when the current request's head was not read to its end.
  bool head_unread() const { return head_end_ != std::string::npos && pos_ < head_end_; }

  /// Writes all of `s` (the guard's own answers); false when the client stopped reading.
  bool write_all(const std::string& s);

  /// Reads the next request head into the buffer and checks it (guarded_server.hpp).
  /// `first`: the connection's first request, whose deadline runs from `accepted`.
  HeadRead await_head(bool first, Clock::time_point accepted);

  /// The body's end as its framing sets it: none, its length read, its last chunk read.
  bool body_ended() const;

  /// Lets `n` body bytes at pos_ pass: at most what a Content-Length leaves, a chunked body
  /// checked byte by byte up to its end (chunk_framing.hpp), within the raw budget. False
  /// (nothing passes) when the framing refuses them or the budget is spent; the reason is
  /// in the request's flags, for the handler's answer.
  bool take_body(std::size_t& n);

  /// The head is complete: what httplib reads beyond it is body, within these bounds.
  void begin_body();

  /// After the last answer on a connection whose body was not read: stop sending, then
  /// discard what the client still sends for a bounded time (it is then able to read the
  /// answer instead of losing it to a reset), then the caller closes.
  void linger();

 private:
  ssize_t fail();

  /// More raw body than raw_body_limit: the read fails, but the connection still carries
  /// the handler's answer (400), then it is closed.
  static ssize_t over_budget();

  /// Removes the head's lines [begin, end) (in order, not overlapping) from the buffer.
  void drop_lines(const std::vector<std::pair<std::size_t, std::size_t>>& spans);

  ssize_t wire_read(char* ptr, std::size_t size, Clock::time_point deadline);

  int fd_;
  SSL* ssl_;
  const ConnectionLimits& l_;
  const std::atomic<socket_t>& listening_;
  std::string buf_;
  std::size_t pos_ = 0;
  std::size_t head_end_ = std::string::npos;
  std::size_t body_budget_ = 0;
  Framing framing_ = Framing::None;
  std::uint64_t body_left_ = 0;  // Content-Length bytes still to come
  ChunkFraming chunks_{0};
  Clock::time_point body_deadline_{};
  bool failed_ = false;
  bool timed_out_ = false;
};

}  // namespace harness::agent
