#pragma once
// The agent HTTP server (harness/agent/API.md, version 1): health, qualification, case
// submission (one case at a time), case status with phase, bundle download, cancel.
// Bearer token (0600 file, constant-time compare) on every path except GET /v1/health;
// 400/401/404/409/412/413 reject a request before anything runs. The transport limits
// (guarded_server.hpp) hold before any handler runs.
//
// Each idea is a room of its own (README.md); this class only builds and wires them. Before
// it answers, a new agent settles what an earlier run left unfinished (restart_settling.hpp).
//
// Threads: connection threads answer requests; one watcher thread per running case.
// The registry mutex guards the in-memory cases and the busy slot only: no file, SQLite
// or process I/O is done under it, so /v1/health never waits for a case's files.
#include "harness/agent/http/agent_options.hpp"
#include "harness/agent/client/loopback.hpp"  // is_loopback_address: the plain-HTTP rule for --bind

#include <memory>

namespace harness::agent {

/// One agent. Construct (validates the token file and state dir), bind(), then serve().
class Server {
 public:
  /// Throws std::runtime_error naming the flag/file: token file unreadable or not 0600,
  /// state dir not creatable, max_body_bytes 0, data_dir or an allow_paths entry not
  /// absolute, only one of
  /// the TLS cert/key given or either unreadable/invalid, plain HTTP on a non-loopback
  /// bind without insecure_plain_http.
  explicit Server(AgentOptions opts);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds bind:port; returns the bound port. Throws std::runtime_error when it cannot.
  int bind();
  /// Serves until stop(). Blocking. Returns at once when stop() came first.
  void serve();
  /// Asks serve() to return; async-signal-safe (sets an atomic flag and writes an eventfd;
  /// serve() applies it at once, or within about 20 ms of its accept loop starting), so a
  /// signal handler may call it at any time, even before serve() has started its accept loop. A running case keeps running (its child is not killed).
  void stop();
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace harness::agent
