// The agent's guarded HTTP(S) transport (guarded_server.hpp).
#include "harness/agent/guarded_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace harness::agent {
namespace {

using Clock = std::chrono::steady_clock;

/// What a handler said about the request it answered (mark_body_consumed, close_after_response).
struct RequestFlags {
  bool body_consumed = false;
  bool close_after = false;
  bool body_timed_out = false;  // a body read waited past the body deadline
  bool body_over_budget = false;  // a body read went past raw_body_limit
};
thread_local RequestFlags* tl_flags = nullptr;

int ms_until(Clock::time_point t) {
  const auto d = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return d <= 0 ? 0 : static_cast<int>(std::min<long long>(d, 1 << 30));
}

enum class Wait { Ready, Timeout, Stopped, Failed };

/// Waits for `events` on `fd` until `until`, in slices of at most 1 s so that a server stop
/// (the listening socket closed) ends the wait within a second. Each slice is a wake of the
/// connection's thread, and a kept-alive connection of a runner polling once a second waits
/// here for the whole case: in the guest every wake is CPU charged to the case (200 ms
/// slices were 5 wakes a second).
Wait wait_fd(int fd, short events, Clock::time_point until, const std::atomic<socket_t>& listening) {
  for (;;) {
    if (listening == INVALID_SOCKET) return Wait::Stopped;
    const int left = ms_until(until);
    if (left == 0) return Wait::Timeout;
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, std::min(left, 1000));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Wait::Failed;
    if (r > 0) return Wait::Ready;  // readable, writable, or hung up: the next call says which
  }
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

/// A complete answer written by the guard itself (the request never reached httplib).
std::string simple_response(int status, const char* reason, const std::string& error) {
  const std::string body = "{\"error\":\"" + json_escape(error) + "\",\"field\":null}";
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

std::string peer_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, buf, sizeof buf);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr))
      ::inet_ntop(AF_INET, &a6->sin6_addr.s6_addr[12], buf, sizeof buf);
    else
      ::inet_ntop(AF_INET6, &a6->sin6_addr, buf, sizeof buf);
  }
  return buf;
}

void ip_and_port(const sockaddr_storage& ss, std::string& ip, int& port) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
    port = ntohs(a->sin6_port);
  }
  ip = buf;
}

/// Body bytes taken off the wire per read (WireStream::read).
constexpr std::size_t kBodyPiece = 16384;

/// Result of reading one request head.
enum class Head { Ready, Closed, TooLarge, TooManyLines, Timeout, Malformed };

/// One connection as httplib sees it: the checked head from the guard's buffer, then the
/// body from the wire (plain or TLS, non-blocking, every wait bounded).
class WireStream final : public httplib::Stream {
 public:
  WireStream(int fd, SSL* ssl, const ConnectionLimits& l, const std::atomic<socket_t>& listening)
      : fd_(fd), ssl_(ssl), l_(l), listening_(listening) {}

  bool is_readable() const override { return pos_ < buf_.size() || (ssl_ && SSL_pending(ssl_) > 0); }
  bool is_writable() const override {
    pollfd p{fd_, POLLOUT, 0};
    return !failed_ && ::poll(&p, 1, 0) > 0 && (p.revents & POLLOUT);
  }

  ssize_t read(char* ptr, std::size_t size) override {
    if (failed_ || size == 0) return failed_ ? -1 : 0;
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
    const std::size_t n = std::min(size, buf_.size() - pos_);
    std::memcpy(ptr, buf_.data() + pos_, n);
    const std::size_t body_part = pos_ + n > head_end_ ? pos_ + n - std::max(pos_, head_end_) : 0;
    pos_ += n;
    if (body_part > body_budget_) return over_budget();
    body_budget_ -= body_part;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, std::size_t size) override {
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

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) ip_and_port(ss, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) ip_and_port(ss, ip, port);
  }
  socket_t socket() const override { return fd_; }

  bool failed() const { return failed_; }
  /// True when the current request's head was not read to its end.
  bool head_unread() const { return head_end_ != std::string::npos && pos_ < head_end_; }

  /// Writes all of `s` (the guard's own answers); false when the client stopped reading.
  bool write_all(const std::string& s) {
    std::size_t off = 0;
    while (off < s.size()) {
      const ssize_t n = write(s.data() + off, s.size() - off);
      if (n <= 0) return false;
      off += static_cast<std::size_t>(n);
    }
    return true;
  }

  /// Reads the next request head into the buffer and checks it (guarded_server.hpp).
  /// `first`: the connection's first request, whose deadline runs from `accepted`.
  Head await_head(bool first, Clock::time_point accepted, bool& has_body, std::string& why) {
    buf_.erase(0, pos_);
    pos_ = 0;
    head_end_ = std::string::npos;
    body_budget_ = 0;
    has_body = false;
    Clock::time_point deadline = first ? accepted + std::chrono::milliseconds(l_.head_deadline_ms)
                                       : Clock::now() + std::chrono::milliseconds(l_.idle_ms);
    bool started = !buf_.empty();
    if (started && !first) deadline = Clock::now() + std::chrono::milliseconds(l_.head_deadline_ms);
    std::size_t i = 0, line_start = 0, lines = 0;
    bool content_length = false, chunked = false;
    unsigned long long length = 0;
    std::vector<std::pair<std::size_t, std::size_t>> range_lines;  // [begin, end) of each Range line
    for (;;) {
      for (; i < buf_.size(); ++i) {
        const auto c = static_cast<unsigned char>(buf_[i]);
        if (i + 1 > l_.max_head_bytes) {
          why = "request line and headers exceed " + std::to_string(l_.max_head_bytes) + " bytes (limit)";
          return Head::TooLarge;
        }
        if (c == '\n') {
          if (i == 0 || buf_[i - 1] != '\r') {
            why = "a line of the request head ends in a bare LF (CRLF required)";
            return Head::Malformed;
          }
          const std::string_view line(buf_.data() + line_start, i - 1 - line_start);
          if (lines == 0 && !line.empty() && !request_line_ok(line)) {
            why = "the request line is not 'METHOD TARGET HTTP/1.0' or 'HTTP/1.1' (HTTP/0.9 and HTTP/2 are not served)";
            return Head::Malformed;
          }
          if (line.empty()) {
            if (lines == 0) {
              why = "empty request line";
              return Head::Malformed;
            }
            head_end_ = i + 1;
            has_body = chunked || (content_length && length > 0);
            drop_lines(range_lines);
            return Head::Ready;
          }
          if (lines > 0 && !check_header(line, content_length, chunked, length, why)) return Head::Malformed;
          if (lines > 0 && is_range(line)) range_lines.emplace_back(line_start, i + 1);
          if (++lines > l_.max_header_lines + 1) {
            why = "request head has more than " + std::to_string(l_.max_header_lines) + " header lines (limit)";
            return Head::TooManyLines;
          }
          line_start = i + 1;
        } else if ((c < 0x20 && c != '\r' && c != '\t') || c == 0x7f) {
          why = "control byte 0x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15] +
                " in the request head";
          return Head::Malformed;
        } else if (i > 0 && buf_[i - 1] == '\r') {
          why = "CR not followed by LF in the request head";
          return Head::Malformed;
        }
      }
      char tmp[4096];
      const ssize_t n = wire_read(tmp, sizeof tmp, deadline);
      if (n <= 0) {
        if (!started) return Head::Closed;  // nothing of a request: an idle or closed connection
        if (timed_out_) {
          why = "request head not received within " + std::to_string(l_.head_deadline_ms) + " ms (limit)";
          return Head::Timeout;
        }
        return Head::Closed;
      }
      if (!started) {
        started = true;
        if (!first) deadline = Clock::now() + std::chrono::milliseconds(l_.head_deadline_ms);
      }
      buf_.append(tmp, static_cast<std::size_t>(n));
    }
  }

  /// The head is complete: what httplib reads beyond it is body, within these bounds.
  void begin_body() {
    body_budget_ = raw_body_limit(l_.max_body_bytes);
    body_deadline_ = Clock::now() + std::chrono::milliseconds(l_.body_deadline_ms);
  }

  /// After the last answer on a connection whose body was not read: stop sending, then
  /// discard what the client still sends for a bounded time (it is then able to read the
  /// answer instead of losing it to a reset), then the caller closes.
  void linger() {
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

 private:
  ssize_t fail() {
    failed_ = true;
    return -1;
  }

  /// More raw body than raw_body_limit: the read fails, but the connection still carries
  /// the handler's answer (400), then it is closed.
  static ssize_t over_budget() {
    if (tl_flags) tl_flags->body_over_budget = true;
    return -1;
  }

  /// A "Range:" header line. The agent serves no byte ranges (API.md: a Range header is
  /// ignored, RFC 9110 section 14.2 lets a server ignore it), and httplib must not see
  /// one: it matches the header with a backtracking std::regex whose recursion touched
  /// about 1-3 MiB of a connection thread's stack for 2,700 ranges in an 8 KB line (64 such
  /// requests at once: a 64-187 MiB peak RSS), and then builds a multipart answer in
  /// memory with one part per range (875 KB for GET /v1/health).
  static bool is_range(std::string_view line) {
    const auto colon = line.find(':');
    return colon != std::string_view::npos && iequals(trim(line.substr(0, colon)), "Range");
  }

  /// Removes the head's lines [begin, end) (in order, not overlapping) from the buffer.
  void drop_lines(const std::vector<std::pair<std::size_t, std::size_t>>& spans) {
    for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
      buf_.erase(it->first, it->second - it->first);
      head_end_ -= it->second - it->first;
    }
  }

  /// The request line httplib can parse and the agent serves: three fields separated by
  /// one space each, the method in capitals, the version HTTP/1.0 or HTTP/1.1. Anything
  /// else (an HTTP/0.9 "GET /", the HTTP/2 preface "PRI * HTTP/2.0") is refused by the
  /// guard with the connection closed: httplib's own 400 for it left what followed on the
  /// connection to be parsed as a second request.
  static bool request_line_ok(std::string_view line) {
    const auto sp1 = line.find(' ');
    if (sp1 == std::string_view::npos || sp1 == 0) return false;
    const auto sp2 = line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || sp2 == sp1 + 1 || line.find(' ', sp2 + 1) != std::string_view::npos)
      return false;
    for (char c : line.substr(0, sp1))
      if (c < 'A' || c > 'Z') return false;
    const std::string_view version = line.substr(sp2 + 1);
    return version == "HTTP/1.1" || version == "HTTP/1.0";
  }

  /// One header line: rejects obs-fold and ambiguous framing; notes the framing.
  static bool check_header(std::string_view line, bool& content_length, bool& chunked, unsigned long long& length,
                           std::string& why) {
    if (line.front() == ' ' || line.front() == '\t') {
      why = "folded header line (obs-fold) in the request head";
      return false;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return true;  // httplib ignores it
    const std::string_view name = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (iequals(name, "Content-Length")) {
      if (content_length) {
        why = "more than one Content-Length header";
        return false;
      }
      if (value.empty() || value.size() > 19 || value.find_first_not_of("0123456789") != std::string_view::npos) {
        why = "Content-Length is not a decimal number of bytes";
        return false;
      }
      content_length = true;
      length = std::stoull(std::string(value));
    } else if (iequals(name, "Transfer-Encoding")) {
      if (chunked || !iequals(value, "chunked")) {
        why = "Transfer-Encoding other than one 'chunked' is not accepted";
        return false;
      }
      chunked = true;
    }
    if (content_length && chunked) {
      why = "both Content-Length and Transfer-Encoding given";
      return false;
    }
    return true;
  }

  ssize_t wire_read(char* ptr, std::size_t size, Clock::time_point deadline) {
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

  int fd_;
  SSL* ssl_;
  const ConnectionLimits& l_;
  const std::atomic<socket_t>& listening_;
  std::string buf_;
  std::size_t pos_ = 0;
  std::size_t head_end_ = std::string::npos;
  std::size_t body_budget_ = 0;
  Clock::time_point body_deadline_{};
  bool failed_ = false;
  bool timed_out_ = false;
};

/// Runs each connection on its own thread, at most `max` at once; the rest wait in order.
class ConnectionThreads final : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(std::size_t max) : max_(max) {}

  void enqueue(std::function<void()> fn) override {
    auto task = std::make_shared<std::function<void()>>(std::move(fn));
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (running_ >= max_) {
        pending_.push_back(std::move(*task));
        return;
      }
      ++running_;
    }
    try {
      std::thread([this, task] { run(std::move(*task)); }).detach();
    } catch (const std::system_error& e) {
      // No thread to be had (EAGAIN): the connection waits for a running one, or, when none
      // runs, is served here on the accept thread.
      bool inline_run = false;
      {
        std::lock_guard<std::mutex> lk(mu_);
        --running_;
        if (running_ == 0) {
          inline_run = true;
          ++running_;
        } else {
          pending_.push_back(std::move(*task));
        }
      }
      std::fprintf(stderr, "agent: cannot start a connection thread (%s)%s\n", e.what(),
                   inline_run ? ": serving it on the accept thread" : ": it waits for a free one");
      if (inline_run) run(std::move(*task));
    }
  }

  void shutdown() override {
    std::unique_lock<std::mutex> lk(mu_);
    idle_.wait(lk, [this] { return running_ == 0 && pending_.empty(); });
  }

 private:
  void run(std::function<void()> fn) {
    for (;;) {
      fn();
      std::lock_guard<std::mutex> lk(mu_);
      if (pending_.empty()) {
        --running_;
        idle_.notify_all();
        return;
      }
      fn = std::move(pending_.front());
      pending_.pop_front();
    }
  }

  const std::size_t max_;
  std::mutex mu_;
  std::condition_variable idle_;
  std::deque<std::function<void()>> pending_;
  std::size_t running_ = 0;
};

}  // namespace

void mark_body_consumed() {
  if (tl_flags) tl_flags->body_consumed = true;
}

void close_after_response() {
  if (tl_flags) tl_flags->close_after = true;
}

bool body_deadline_passed() { return tl_flags && tl_flags->body_timed_out; }

bool body_over_raw_limit() { return tl_flags && tl_flags->body_over_budget; }

/// Connection counts and the serving of one connection (shared by the plain and TLS servers).
///
/// Slots: an admitted connection holds one slot of its address and one of the server. When
/// a new connection finds its address's slots or the server's full, the connection that has
/// waited longest for a request head (a TLS handshake, a head still arriving, an idle
/// keep-alive) is closed to make room, from the same address when that address is full,
/// else from any: a slow client therefore cannot keep the slots of the runner's own address
/// or of the server, since the runner's request, once its head is in, is not closable this
/// way. Only when every slot concerned is inside a request (a handler runs) is the new
/// connection refused (503).
class ConnectionGuard {
 public:
  using Process = std::function<bool(httplib::Stream&, bool close_connection, bool& connection_closed)>;

  explicit ConnectionGuard(const ConnectionLimits& l) : l_(l) {}
  const ConnectionLimits& limits() const { return l_; }

  void serve(int fd, SSL_CTX* ctx, const std::atomic<socket_t>& listening, const Process& process) {
    const auto accepted = Clock::now();
    const std::string addr = peer_address(fd);
    const int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    // No Nagle: an answer is written in pieces (head, then body), and on a kept-alive
    // connection the last piece otherwise waited for the client's delayed ACK (about 40 ms
    // per answer; fleet_bench at one host: 132 against 56 ms of wall per case).
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::string refusal;
    const auto slot = admit(fd, addr, accepted, refusal);
    if (!refusal.empty()) {
      // Plain HTTP gets a 503 at once; over TLS it would need a handshake first, which is
      // what the limit is there to avoid: the connection is just closed.
      if (!ctx) {
        char tmp[4096];
        while (::recv(fd, tmp, sizeof tmp, MSG_DONTWAIT) > 0) {
          // what the client already sent: read, so that closing sends FIN, not a reset
        }
        const std::string r = simple_response(503, "Service Unavailable", refusal);
        (void)!::send(fd, r.data(), r.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        ::shutdown(fd, SHUT_WR);
      }
      ::close(fd);
      return;
    }
    serve_admitted(fd, ctx, listening, process, accepted, slot);
    release(slot);  // before close: an eviction never shuts down a reused descriptor
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
  }

 private:
  /// An admitted connection. `waiting_head`: no request of it is being handled; `since`:
  /// when that wait began. `evicted`: closed to make room; it no longer counts.
  struct Slot {
    int fd;
    std::string addr;
    Clock::time_point since;
    bool waiting_head = true;
    bool evicted = false;
  };
  using SlotIt = std::list<Slot>::iterator;

  /// Takes a slot for `fd`, closing the longest-waiting head of the full pool to make room
  /// (class comment); `refusal` says why when no slot can be had.
  SlotIt admit(int fd, const std::string& addr, Clock::time_point accepted, std::string& refusal) {
    std::lock_guard<std::mutex> lk(mu_);
    const auto mine = per_address_.find(addr);
    const bool address_full = mine != per_address_.end() && mine->second >= l_.max_connections_per_address;
    if (address_full || total_ >= l_.max_connections) {
      SlotIt victim = slots_.end();
      for (auto it = slots_.begin(); it != slots_.end(); ++it)
        if (it->waiting_head && !it->evicted && (!address_full || it->addr == addr) &&
            (victim == slots_.end() || it->since < victim->since))
          victim = it;
      if (victim == slots_.end()) {
        refusal = address_full ? "too many open connections from " + addr + " (limit " +
                                     std::to_string(l_.max_connections_per_address) +
                                     " per client address, every one inside a request)"
                               : "too many open connections (limit " + std::to_string(l_.max_connections) +
                                     ", every one inside a request)";
        return slots_.end();
      }
      victim->evicted = true;
      uncount(victim->addr);
      ::shutdown(victim->fd, SHUT_RDWR);  // its thread sees the end of the stream and closes it
    }
    ++per_address_[addr];
    ++total_;
    return slots_.insert(slots_.end(), Slot{fd, addr, accepted});
  }

  /// Marks the slot waiting for a head (true) or inside a request (false); false when the
  /// connection was closed to make room (it must stop).
  bool set_waiting(SlotIt slot, bool waiting) {
    std::lock_guard<std::mutex> lk(mu_);
    slot->waiting_head = waiting;
    if (waiting) slot->since = Clock::now();
    return !slot->evicted;
  }

  void release(SlotIt slot) {
    std::lock_guard<std::mutex> lk(mu_);
    if (!slot->evicted) uncount(slot->addr);
    slots_.erase(slot);
  }

  void uncount(const std::string& addr) {  // under mu_
    --total_;
    if (--per_address_[addr] == 0) per_address_.erase(addr);
  }

  void serve_admitted(int fd, SSL_CTX* ctx, const std::atomic<socket_t>& listening, const Process& process,
                      Clock::time_point accepted, SlotIt slot) {
    SSL* ssl = nullptr;
    if (ctx) {
      ssl = SSL_new(ctx);
      if (!ssl) return;
      SSL_set_fd(ssl, fd);
      const auto until = accepted + std::chrono::milliseconds(l_.head_deadline_ms);
      for (;;) {
        const int r = SSL_accept(ssl);
        if (r == 1) break;
        const int e = SSL_get_error(ssl, r);
        const short ev = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
        if (ev == 0 || wait_fd(fd, ev, until, listening) != Wait::Ready) {
          ERR_clear_error();
          SSL_free(ssl);
          return;
        }
      }
    }
    WireStream s(fd, ssl, l_, listening);
    bool linger = false;
    for (std::size_t n = 0; n < l_.max_requests_per_connection; ++n) {
      bool has_body = false;
      std::string why;
      if (n > 0 && !set_waiting(slot, true)) break;
      const Head h = s.await_head(n == 0, accepted, has_body, why);
      if (h == Head::Closed) break;
      if (h == Head::Ready && !set_waiting(slot, false)) break;  // closed to make room as the head came in
      if (h != Head::Ready) {
        const std::string r = h == Head::Timeout        ? simple_response(408, "Request Timeout", why)
                              : h == Head::Malformed    ? simple_response(400, "Bad Request", why)
                                                        : simple_response(431, "Request Header Fields Too Large", why);
        linger = s.write_all(r);
        break;
      }
      s.begin_body();
      RequestFlags flags;
      tl_flags = &flags;
      bool closed = false;
      const bool ok = process(s, n + 1 == l_.max_requests_per_connection, closed);
      tl_flags = nullptr;
      const bool unread_body = has_body && !flags.body_consumed;
      // httplib answered without reading the whole head (a header line above its own 8 KB
      // limit: 400): the rest of the head must not be parsed as a next request.
      const bool unread_head = s.head_unread();
      if (!ok || closed || s.failed() || flags.close_after || unread_body || unread_head) {
        linger = ok && !s.failed() && (unread_body || flags.close_after || unread_head);
        break;
      }
    }
    if (ssl) {
      if (!s.failed()) SSL_shutdown(ssl);  // close_notify, once; the client's answer is not awaited
      ERR_clear_error();
    }
    if (linger) s.linger();
    if (ssl) SSL_free(ssl);
  }

  const ConnectionLimits l_;
  std::mutex mu_;
  std::list<Slot> slots_;
  std::map<std::string, std::size_t> per_address_;  // slots not evicted, by address
  std::size_t total_ = 0;                           // slots not evicted
};

namespace {
void adopt_limits(httplib::Server& s, const ConnectionLimits& l) {
  // Room for the connections within the limits plus a few being refused at once.
  const std::size_t threads = l.max_connections + 16;
  s.new_task_queue = [threads] { return new ConnectionThreads(threads); };
  s.set_payload_max_length(l.max_body_bytes);
}
}  // namespace

GuardedServer::GuardedServer(const ConnectionLimits& limits) : guard_(std::make_shared<ConnectionGuard>(limits)) {
  adopt_limits(*this, limits);
}
GuardedServer::~GuardedServer() = default;

void GuardedServer::deepen_backlog(int backlog) {
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, backlog);
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  guard_->serve(sock, nullptr, svr_sock_, [this](httplib::Stream& s, bool close, bool& closed) {
    return process_request(s, close, closed, nullptr);
  });
  return true;
}

GuardedSslServer::GuardedSslServer(const char* cert_path, const char* key_path, const ConnectionLimits& limits)
    : httplib::SSLServer(cert_path, key_path), guard_(std::make_shared<ConnectionGuard>(limits)) {
  adopt_limits(*this, limits);
}
GuardedSslServer::~GuardedSslServer() = default;

void GuardedSslServer::deepen_backlog(int backlog) {
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, backlog);
}

bool GuardedSslServer::process_and_close_socket(socket_t sock) {
  guard_->serve(sock, ssl_context(), svr_sock_, [this](httplib::Stream& s, bool close, bool& closed) {
    return process_request(s, close, closed, nullptr);
  });
  return true;
}

}  // namespace harness::agent
