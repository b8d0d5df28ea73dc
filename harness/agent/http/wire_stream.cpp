// One connection as httplib sees it (see wire_stream.hpp).
#include "harness/agent/http/wire_stream.hpp"

#include "harness/agent/http/request_flags.hpp"
#include "harness/agent/http/socket_address.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace harness::agent {
namespace {

/// Body bytes taken off the wire per read (WireStream::read).
constexpr std::size_t kBodyPiece = 16384;

}  // namespace

bool WireStream::is_readable() const { return pos_ < buf_.size() || (ssl_ && SSL_pending(ssl_) > 0); }

bool WireStream::is_writable() const {
  pollfd p{fd_, POLLOUT, 0};
  return !failed_ && ::poll(&p, 1, 0) > 0 && (p.revents & POLLOUT);
}

ssize_t WireStream::read(char* ptr, std::size_t size) {
  if (failed_ || size == 0) return failed_ ? -1 : 0;
  const bool in_head = pos_ < head_end_;
  // The framing says the body is over (none at all: RFC 9112 section 6.3): the library
  // reads an end of stream, never what the client sends next.
  if (!in_head && body_ended()) return 0;
  if (pos_ >= buf_.size()) {
    // The head and whatever came with it are consumed: the next piece of body comes
    // from the wire into the buffer, so that httplib's byte-at-a-time reads of chunk
    // lines (500,000 one-byte chunks) cost a copy each, not a system call each. What is
    // read never exceeds the raw body budget; what is left of it after this request (a
    // next request on the connection) stays for await_head.
    if (body_budget_ == 0) return over_budget();
    buf_.resize(std::min<std::size_t>(kBodyPiece, body_budget_));
    pos_ = 0;
    head_end_ = 0;  // all of the buffer is body
    const ssize_t n = wire_read(buf_.data(), buf_.size(), body_deadline_);
    buf_.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    // A body that stalls past its deadline: the handler still answers (408), then the
    // connection is closed; any other read error ends it at once.
    if (n < 0 && !timed_out_) failed_ = true;
    if (n < 0 && timed_out_ && tl_flags) tl_flags->body_timed_out = true;
    if (n <= 0) return n;
  }
  std::size_t n = std::min(size, buf_.size() - pos_);
  if (in_head)
    n = std::min(n, head_end_ - pos_);  // a read never runs from the head into the body
  else if (!take_body(n))
    return -1;
  std::memcpy(ptr, buf_.data() + pos_, n);
  pos_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t WireStream::write(const char* ptr, std::size_t size) {
  if (failed_) return -1;
  const auto until = Clock::now() + std::chrono::milliseconds(l_.io_timeout_ms);
  for (;;) {
    short ev = POLLOUT;
    if (ssl_) {
      const int r = SSL_write(ssl_, ptr, static_cast<int>(std::min<std::size_t>(size, 1 << 30)));
      if (r > 0) return r;
      const int e = SSL_get_error(ssl_, r);
      if (e == SSL_ERROR_WANT_READ)
        ev = POLLIN;
      else if (e != SSL_ERROR_WANT_WRITE)
        return fail();
    } else {
      const ssize_t r = ::send(fd_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (r >= 0) return r;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return fail();
    }
    if (wait_fd(fd_, ev, until, listening_) != Wait::Ready) return fail();
  }
}

void WireStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) ip_and_port(ss, ip, port);
}

void WireStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) ip_and_port(ss, ip, port);
}

bool WireStream::write_all(const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = write(s.data() + off, s.size() - off);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

HeadRead WireStream::await_head(bool first, Clock::time_point accepted) {
  buf_.erase(0, pos_);
  pos_ = 0;
  head_end_ = std::string::npos;
  body_budget_ = 0;
  Clock::time_point deadline = first ? accepted + std::chrono::milliseconds(l_.head_deadline_ms)
                                     : Clock::now() + std::chrono::milliseconds(l_.idle_ms);
  bool started = !buf_.empty();
  if (started && !first) deadline = Clock::now() + std::chrono::milliseconds(l_.head_deadline_ms);
  std::size_t i = 0, line_start = 0, lines = 0;
  bool content_length = false, chunked = false;
  unsigned long long length = 0;
  std::vector<std::pair<std::size_t, std::size_t>> range_lines;  // [begin, end) of each Range line
  framing_ = Framing::None;
  body_left_ = 0;
  chunks_ = ChunkFraming(l_.max_body_bytes);
  for (;;) {
    for (; i < buf_.size(); ++i) {
      const auto c = static_cast<unsigned char>(buf_[i]);
      if (i + 1 > l_.max_head_bytes)
        return {Head::TooLarge, false,
                "request line and headers exceed " + std::to_string(l_.max_head_bytes) + " bytes (limit)"};
      if (c == '\n') {
        if (i == 0 || buf_[i - 1] != '\r')
          return {Head::Malformed, false, "a line of the request head ends in a bare LF (CRLF required)"};
        const std::string_view line(buf_.data() + line_start, i - 1 - line_start);
        if (lines == 0 && !line.empty() && !request_line_ok(line))
          return {Head::Malformed, false,
                  "the request line is not 'METHOD TARGET HTTP/1.0' or 'HTTP/1.1' (HTTP/0.9 and HTTP/2 are not served)"};
        if (line.empty()) {
          if (lines == 0) return {Head::Malformed, false, "empty request line"};
          head_end_ = i + 1;
          const bool has_body = chunked || (content_length && length > 0);
          framing_ = chunked ? Framing::Chunked : has_body ? Framing::Length : Framing::None;
          body_left_ = length;
          drop_lines(range_lines);
          return {Head::Ready, has_body, ""};
        }
        if (lines > 0)
          if (auto checked = check_header(line, content_length, chunked, length); !checked)
            return {Head::Malformed, false, checked.error().message};
        if (lines > 0 && is_range(line)) range_lines.emplace_back(line_start, i + 1);
        if (++lines > l_.max_header_lines + 1)
          return {Head::TooManyLines, false,
                  "request head has more than " + std::to_string(l_.max_header_lines) + " header lines (limit)"};
        line_start = i + 1;
      } else if ((c < 0x20 && c != '\r' && c != '\t') || c == 0x7f) {
        return {Head::Malformed, false,
                "control byte 0x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15] +
                    " in the request head"};
      } else if (i > 0 && buf_[i - 1] == '\r') {
        return {Head::Malformed, false, "CR not followed by LF in the request head"};
      }
    }
    char tmp[4096];
    const ssize_t n = wire_read(tmp, sizeof tmp, deadline);
    if (n <= 0) {
      if (!started) return {Head::Closed, false, ""};  // nothing of a request: an idle or closed connection
      if (timed_out_)
        return {Head::Timeout, false,
                "request head not received within " + std::to_string(l_.head_deadline_ms) + " ms (limit)"};
      return {Head::Closed, false, ""};
    }
    if (!started) {
      started = true;
      if (!first) deadline = Clock::now() + std::chrono::milliseconds(l_.head_deadline_ms);
    }
    buf_.append(tmp, static_cast<std::size_t>(n));
  }
}

bool WireStream::body_ended() const {
  return framing_ == Framing::None || (framing_ == Framing::Length && body_left_ == 0) ||
         (framing_ == Framing::Chunked && chunks_.done());
}

bool WireStream::take_body(std::size_t& n) {
  if (framing_ == Framing::Length) n = static_cast<std::size_t>(std::min<std::uint64_t>(n, body_left_));
  if (framing_ == Framing::Chunked) {
    const ChunkStep st = chunks_.feed(std::string_view(buf_.data() + pos_, n));
    if (st.outcome == ChunkStep::Outcome::Malformed || st.outcome == ChunkStep::Outcome::TooLarge) {
      if (tl_flags)
        tl_flags->framing = {st.outcome == ChunkStep::Outcome::TooLarge ? BodyFraming::Verdict::TooLarge
                                                                          : BodyFraming::Verdict::Malformed,
                             st.why};
      return false;
    }
    n = st.used;
  }
  if (n > body_budget_) {
    over_budget();  // the flag for the handler's 400; the read fails
    return false;
  }
  body_budget_ -= n;
  if (framing_ == Framing::Length) body_left_ -= n;
  return true;
}

void WireStream::begin_body() {
  body_budget_ = raw_body_limit(l_.max_body_bytes);
  body_deadline_ = Clock::now() + std::chrono::milliseconds(l_.body_deadline_ms);
}

void WireStream::linger() {
  ::shutdown(fd_, SHUT_WR);
  const auto until = Clock::now() + std::chrono::seconds(2);
  std::size_t budget = std::max<std::size_t>(2 * l_.max_body_bytes, 1 << 20) + 65536;
  char tmp[16384];
  while (budget > 0 && wait_fd(fd_, POLLIN, until, listening_) == Wait::Ready) {
    const ssize_t n = ::recv(fd_, tmp, std::min(sizeof tmp, budget), MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    budget -= static_cast<std::size_t>(n);
  }
}

ssize_t WireStream::fail() {
  failed_ = true;
  return -1;
}

ssize_t WireStream::over_budget() {
  if (tl_flags) tl_flags->body_over_budget = true;
  return -1;
}

void WireStream::drop_lines(const std::vector<std::pair<std::size_t, std::size_t>>& spans) {
  for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
    buf_.erase(it->first, it->second - it->first);
    head_end_ -= it->second - it->first;
  }
}

ssize_t WireStream::wire_read(char* ptr, std::size_t size, Clock::time_point deadline) {
  const auto until = std::min(deadline, Clock::now() + std::chrono::milliseconds(l_.io_timeout_ms));
  for (;;) {
    short ev = POLLIN;
    if (ssl_) {
      const int r = SSL_read(ssl_, ptr, static_cast<int>(std::min<std::size_t>(size, 1 << 30)));
      if (r > 0) return r;
      const int e = SSL_get_error(ssl_, r);
      if (e == SSL_ERROR_ZERO_RETURN) return 0;
      if (e == SSL_ERROR_WANT_WRITE)
        ev = POLLOUT;
      else if (e != SSL_ERROR_WANT_READ)
        return fail();
    } else {
      const ssize_t r = ::recv(fd_, ptr, size, MSG_DONTWAIT);
      if (r >= 0) return r;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return fail();
    }
    const Wait w = wait_fd(fd_, ev, until, listening_);
    if (w == Wait::Ready) continue;
    // A timeout is not a broken connection: the guard may still answer 408 on it.
    if (w == Wait::Timeout) {
      timed_out_ = true;
      return -1;
    }
    return fail();
  }
}

}  // namespace harness::agent
