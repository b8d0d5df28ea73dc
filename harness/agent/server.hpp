#pragma once
// The agent HTTP server (harness/agent/API.md, version 1; issue 5): health,
// qualification, case submission (one case at a time), case status with phase, bundle
// download, cancel. Bearer token (0600 file, constant-time compare) on every path except
// GET /v1/health; 401/400/409/412/413 reject a request before anything runs.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

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
  /// Executor command prefix; the agent appends `--spec FILE --out DIR`.
  /// Empty = "<this harness> case run". Override for tests.
  std::string executor;
  /// Command printing a qualification report (JSON, `harness qualify --json` shape) on
  /// stdout. Empty = in-process qualify::run(). Override for tests.
  std::string qualify_cmd;
  std::string swapfile = "/var/lib/harness/swapfile";  ///< qualification: swapfile to check
  unsigned vcpus = 1;              ///< qualification: expected VM shape (study: 1 vCPU)
  std::uint64_t memory_mib = 1024; ///< qualification: expected memory, MiB (study: 1 GiB)
  int cancel_grace_s = 60;         ///< SIGTERM -> SIGKILL (process group) after this, seconds
  bool oom_protect = true;         ///< write -1000 to /proc/self/oom_score_adj at start
  /// TLS (HTTPS) with this certificate chain and private key (PEM files). Both or neither.
  std::string tls_cert_file;
  std::string tls_key_file;
  /// Serve plain HTTP on a non-loopback address. Without it, a non-loopback bind without
  /// TLS is refused: the bearer token must not cross a network in clear text. Local qemu
  /// guests pass it (reachable only through the host's loopback port forward).
  bool insecure_plain_http = false;
  /// Accept POST /v1/reboot (issue 13: a reboot between cases on a reused VM, when the
  /// operator allows it). Without it the endpoint answers 403.
  bool allow_reboot = false;
  /// TEST OVERRIDE: command run (sh -c) instead of sync() + reboot(RB_AUTOBOOT).
  std::string reboot_cmd;
};

/// True for 127.0.0.0/8, ::1 and "localhost" (the addresses where plain HTTP is allowed).
bool is_loopback_address(const std::string& bind);

/// One agent. Construct (validates the token file and state dir), bind(), then serve().
class Server {
 public:
  /// Throws std::runtime_error naming the flag/file: token file unreadable or not 0600,
  /// state dir not creatable, max_body_bytes 0, no qualification available, only one of
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
  /// Asks serve() to return; async-signal-safe (sets an atomic flag that serve() applies
  /// within about 20 ms), so a signal handler may call it at any time, even before serve()
  /// has started its accept loop. A running case keeps running (its child is not killed).
  void stop();
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace harness::agent
