// The guard of the agent's connections (see connection_guard.hpp).
#include "harness/agent/http/connection_guard.hpp"

#include "harness/agent/http/request_flags.hpp"
#include "harness/agent/http/socket_address.hpp"
#include "harness/agent/http/wire_stream.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace harness::agent {
namespace {

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

}  // namespace

void ConnectionGuard::serve(int fd, SSL_CTX* ctx, const std::atomic<socket_t>& listening, const Process& process) {
  const auto accepted = Clock::now();
  const std::string addr = peer_address(fd);
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  // No Nagle: an answer is written in pieces (head, then body), and on a kept-alive
  // connection the last piece otherwise waited for the client's delayed ACK (about 40 ms
  // per answer; fleet_bench at one host: 132 against 56 ms of wall per case).
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const auto slot = admit(fd, addr, accepted);
  if (!slot) {
    // Plain HTTP gets a 503 at once; over TLS it would need a handshake first, which is
    // what the limit is there to avoid: the connection is just closed.
    if (!ctx) {
      char tmp[4096];
      while (::recv(fd, tmp, sizeof tmp, MSG_DONTWAIT) > 0) {
        // what the client already sent: read, so that closing sends FIN, not a reset
      }
      const std::string r = simple_response(503, "Service Unavailable", slot.error().message);
      (void)!::send(fd, r.data(), r.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      ::shutdown(fd, SHUT_WR);
    }
    ::close(fd);
    return;
  }
  serve_admitted(fd, ctx, listening, process, accepted, *slot);
  release(*slot);  // before close: an eviction never shuts down a reused descriptor
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

Expected<ConnectionGuard::SlotIt> ConnectionGuard::admit(int fd, const std::string& addr, Clock::time_point accepted) {
  std::lock_guard<std::mutex> lk(mu_);
  const auto mine = per_address_.find(addr);
  const bool address_full = mine != per_address_.end() && mine->second >= l_.max_connections_per_address;
  if (address_full || total_ >= l_.max_connections) {
    SlotIt victim = slots_.end();
    for (auto it = slots_.begin(); it != slots_.end(); ++it)
      if (it->waiting_head && !it->evicted && (!address_full || it->addr == addr) &&
          (victim == slots_.end() || it->since < victim->since))
        victim = it;
    if (victim == slots_.end())
      return problem(address_full ? "too many open connections from " + addr + " (limit " +
                                        std::to_string(l_.max_connections_per_address) +
                                        " per client address, every one inside a request)"
                                  : "too many open connections (limit " + std::to_string(l_.max_connections) +
                                        ", every one inside a request)");
    victim->evicted = true;
    uncount(victim->addr);
    ::shutdown(victim->fd, SHUT_RDWR);  // its thread sees the end of the stream and closes it
  }
  ++per_address_[addr];
  ++total_;
  return slots_.insert(slots_.end(), Slot{fd, addr, accepted});
}

bool ConnectionGuard::set_waiting(SlotIt slot, bool waiting) {
  std::lock_guard<std::mutex> lk(mu_);
  slot->waiting_head = waiting;
  if (waiting) slot->since = Clock::now();
  return !slot->evicted;
}

void ConnectionGuard::release(SlotIt slot) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!slot->evicted) uncount(slot->addr);
  slots_.erase(slot);
}

void ConnectionGuard::uncount(const std::string& addr) {
  --total_;
  if (--per_address_[addr] == 0) per_address_.erase(addr);
}

void ConnectionGuard::serve_admitted(int fd, SSL_CTX* ctx, const std::atomic<socket_t>& listening, const Process& process,
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
    if (n > 0 && !set_waiting(slot, true)) break;
    const auto [h, has_body, why] = s.await_head(n == 0, accepted);
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

}  // namespace harness::agent
