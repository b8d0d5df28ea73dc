#pragma once
// The flags of `harness agent` (harness/agent/API.md): listening, limits, the case's
// directories and paths, the executor and qualification commands, TLS, reboots. Every room
// reads its part: the transport (transport_limits.hpp), submission and qualification, the
// server that wires them (routes/server.hpp).
#include "harness/agent/http/connection_limits.hpp"

#include <cstddef>
#include <cstdint>
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

}  // namespace harness::agent
