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
#include "harness/agent/connection_limits.hpp"
#include "harness/agent/loopback.hpp"  // is_loopback_address: the plain-HTTP rule for --bind

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace harness::agent {

/// Flags of `harness agent`.
struct AgentOptions {
  std::string bind = "127.0.0.1";  ///< listen address (API.md default)
  int port = 8080;                 ///< TCP port; 0 = any free port (see Server::port())
  std::string token_file;          ///< required; mode must be 0600 (load_token)
  std::string state_dir;           ///< cases/<id>/{spec.json,out/,executor.log,status.json}
  std::size_t max_body_bytes = 1 << 20;  ///< request bodies above this get 413 (API.md: 1 MiB),
                                         ///< counted as received (chunked or no length too)
  int body_deadline_s = 30;              ///< a body not received within this gets 408 (slow drip)
  /// Head deadline, header limits, connection limits (API.md "Limits"). Its
  /// max_body_bytes and body_deadline_ms are taken from the two fields above.
  ConnectionLimits limits;
  /// Spec paths the executor opens as root (backend.swapfile_path, canaries.sqlite_db_path)
  /// must lie under this directory or one of allow_paths (API.md "Paths"; ours).
  std::string data_dir = "/var/lib/harness";
  std::vector<std::string> allow_paths;  ///< further directories (--allow-path, repeatable)
  /// Executor command prefix; the agent appends `--spec FILE --out DIR`.
  /// Empty = default_executor (executor_command.hpp): harness-case next to this binary,
  /// else "<this harness> case run". Override for tests.
  std::string executor;
  /// Command printing a qualification report (JSON, `harness qualify --json` shape) on
  /// stdout. Empty = in-process qualify::run(). Override for tests.
  std::string qualify_cmd;
  std::string swapfile = "/var/lib/harness/swapfile";  ///< qualification: swapfile to check
  unsigned vcpus = 1;              ///< qualification: expected VM shape (study: 1 vCPU)
  std::uint64_t memory_mib = 1024; ///< qualification: expected memory, MiB (study: 1 GiB)
  /// Cancel: SIGTERM to the executor's process group, SIGKILL after this many seconds.
  /// 0 = per case: its restoration_timeout_s + 60 s (the executor restores on SIGTERM; the
  /// SIGKILL is for an executor that hangs, never the normal end of a cancel).
  int cancel_grace_s = 0;
  bool oom_protect = true;         ///< write -1000 to /proc/self/oom_score_adj at start
  /// TLS (HTTPS) with this certificate chain and private key (PEM files). Both or neither.
  std::string tls_cert_file;
  std::string tls_key_file;
  /// Serve plain HTTP on a non-loopback address. Without it, a non-loopback bind without
  /// TLS is refused: the bearer token must not cross a network in clear text. Local qemu
  /// guests pass it (reachable only through the host's loopback port forward).
  bool insecure_plain_http = false;
  /// Accept POST /v1/reboot (a reboot between cases on a reused VM, when the
  /// operator allows it). Without it the endpoint answers 403.
  bool allow_reboot = false;
  /// TEST OVERRIDE: command run (sh -c) instead of sync() + reboot(RB_AUTOBOOT).
  std::string reboot_cmd;
};

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
