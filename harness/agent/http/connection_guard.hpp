#pragma once
// The guard of the agent's connections (guarded_server.hpp): connection slots per address and in
// all, the eviction of the longest wait for a request head, and the serving of one admitted
// connection (TLS handshake, each request head checked, httplib's processing, the close).
#include "harness/agent/http/connection_limits.hpp"
#include "harness/agent/http/socket_wait.hpp"
#include "harness/error/expected.hpp"

#include <httplib.h>
#include <openssl/ssl.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <string>

namespace harness::agent {

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

  /// Serves the accepted socket `fd` to its end and closes it: admitted (else 503 over plain
  /// HTTP, closed), the TLS handshake when `ctx` is given, then up to max_requests_per_connection
  /// requests, each handed to `process` once its head is in and checked.
  void serve(int fd, SSL_CTX* ctx, const std::atomic<socket_t>& listening, const Process& process);

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
  /// (class comment); the Problem (the 503 text) when no slot can be had.
  Expected<SlotIt> admit(int fd, const std::string& addr, Clock::time_point accepted);

  /// Marks the slot waiting for a head (true) or inside a request (false); false when the
  /// connection was closed to make room (it must stop).
  bool set_waiting(SlotIt slot, bool waiting);

  void release(SlotIt slot);

  void uncount(const std::string& addr);  // under mu_

  void serve_admitted(int fd, SSL_CTX* ctx, const std::atomic<socket_t>& listening, const Process& process,
                      Clock::time_point accepted, SlotIt slot);

  const ConnectionLimits l_;
  std::mutex mu_;
  std::list<Slot> slots_;
  std::map<std::string, std::size_t> per_address_;  // slots not evicted, by address
  std::size_t total_ = 0;                           // slots not evicted
};

}  // namespace harness::agent
