// `harness agent`: the per-VM HTTP agent (harness/agent/API.md).
#include "harness/cli/validators.hpp"
#include "registry.hpp"

#include "harness/agent/routes/server.hpp"
#include "harness/agent/client/tls_pin.hpp"

#include <csignal>
#include <cstdio>
#include <memory>

namespace {

harness::agent::Server* g_server = nullptr;

/// --token-file's help: the token rule (harness/agent/API.md "The token").
constexpr const char* kTokenFileHelp =
    "Bearer token file, mode 0600; the token: at least 32 characters of A-Z a-z 0-9 - . _ ~ + / (= padding at its "
    "end), at least 8 different, not a shorter string repeated (harness/agent/API.md; make one with: "
    "head -c 32 /dev/urandom | base64)";

void on_signal(int) {
  if (g_server) g_server->stop();
}

void add_agent(CLI::App& app) {
  auto o = std::make_shared<harness::agent::AgentOptions>();
  auto* sub = app.add_subcommand(
      "agent", "Serve the agent HTTP API (v1): run one case at a time on this VM, with a bearer token");
  sub->add_option("--bind", o->bind, "Listen address")->capture_default_str();
  sub->add_option("--port", o->port, "TCP port (0 = any free port, printed)")
      ->capture_default_str()->check(harness::cli::integer_in(0, 65535));
  sub->add_option("--token-file", o->token_file, kTokenFileHelp)->required();
  sub->add_option("--state-dir", o->state_dir, "Case specs, outputs and bundles")
      ->default_val("/var/lib/harness/agent");
  sub->add_option("--max-body-bytes", o->max_body_bytes,
                  "Larger request bodies get 413 (bytes as received, chunked too; no length, no body)")
      ->capture_default_str()->check(harness::cli::integer_in(1));
  sub->add_option("--body-deadline-s", o->body_deadline_s, "A request body not received within this gets 408, seconds")
      ->capture_default_str()->check(harness::cli::integer_in(1, 86400));
  auto head_deadline_s = std::make_shared<int>(o->limits.head_deadline_ms / 1000);
  sub->add_option("--header-deadline-s", *head_deadline_s,
                  "Request line and headers (and a TLS handshake) not received within this get 408 and the "
                  "connection is closed, seconds")
      ->capture_default_str()->check(harness::cli::integer_in(1, 3600));
  sub->add_option("--max-header-bytes", o->limits.max_head_bytes, "Larger request heads get 431, bytes")
      ->capture_default_str()->check(harness::cli::integer_in(1024, 1 << 20));
  sub->add_option("--max-header-lines", o->limits.max_header_lines, "Requests with more header lines get 431")
      ->capture_default_str()->check(harness::cli::integer_in(8, 10000));
  sub->add_option("--max-connections", o->limits.max_connections,
                  "Open connections, all clients together; more get 503 and are closed")
      ->capture_default_str()->check(harness::cli::integer_in(2, 4096));
  sub->add_option("--max-connections-per-address", o->limits.max_connections_per_address,
                  "Open connections from one client address; more get 503 and are closed")
      ->capture_default_str()->check(harness::cli::integer_in(1, 4096));
  sub->add_option("--data-dir", o->data_dir,
                  "Spec paths the executor opens as root (swapfile, canary DB) must lie under this directory")
      ->capture_default_str();
  sub->add_option("--allow-path", o->allow_paths,
                  "A further directory spec paths may lie under (repeatable)");
  sub->add_option("--swapfile", o->swapfile, "Swapfile checked by qualification")->capture_default_str();
  sub->add_option("--vcpus", o->vcpus, "Expected vCPUs (qualification)")->capture_default_str()
      ->check(harness::cli::integer_in(1, 4096));
  sub->add_option("--memory-mib", o->memory_mib, "Expected memory, MiB (qualification)")->capture_default_str()
      ->check(harness::cli::integer_in(1));
  sub->add_option("--cancel-grace-s", o->cancel_grace_s,
                  "Cancel: SIGTERM (the executor restores the VM), then SIGKILL after N s if it has not exited; "
                  "0 = the case's restoration_timeout_s + 60")
      ->capture_default_str()->check(harness::cli::integer_in(0, 86400));
  sub->add_option("--executor", o->executor,
                  "TEST OVERRIDE: executor command prefix (default '<dir>/harness-case case run' when that "
                  "file is there, else '<harness> case run'); "
                  "'--spec FILE --out DIR' is appended");
  sub->add_option("--qualify-cmd", o->qualify_cmd,
                  "TEST OVERRIDE: command printing a qualification report JSON "
                  "(default: in-process qualification)");
  sub->add_flag("!--no-oom-protect", o->oom_protect, "Do not set oom_score_adj -1000");
  sub->add_option("--tls-cert", o->tls_cert_file, "Serve HTTPS with this PEM certificate (chain)")
      ->check(CLI::ExistingFile);
  sub->add_option("--tls-key", o->tls_key_file, "PEM private key of --tls-cert (mode 0600)")->check(CLI::ExistingFile);
  sub->add_flag("--insecure-plain-http", o->insecure_plain_http,
                "Allow plain HTTP on a non-loopback --bind (the token then crosses the network in clear "
                "text); without it such a bind needs --tls-cert/--tls-key");
  sub->add_flag("--allow-reboot", o->allow_reboot,
                "Accept POST /v1/reboot: reboot this VM between cases (hosts file reboot_between_cases); "
                "refused (409) while a case runs");
  sub->add_option("--reboot-cmd", o->reboot_cmd,
                  "TEST OVERRIDE: run this (sh -c) instead of sync() + reboot(RB_AUTOBOOT)");
  sub->callback([o, head_deadline_s] {
    o->limits.head_deadline_ms = *head_deadline_s * 1000;
    harness::agent::Server server(*o);
    int port = server.bind();
    g_server = &server;
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    std::printf("agent listening on %s:%d (%s, state %s)\n", o->bind.c_str(), port,
                o->tls_cert_file.empty() ? "http" : "https", o->state_dir.c_str());
    if (!o->tls_cert_file.empty())  // what the hosts file's tls_pin_sha256 must say
      std::printf("agent TLS public-key pin: %s\n", harness::agent::spki_pin_sha256(o->tls_cert_file).c_str());
    std::fflush(stdout);
    server.serve();
    g_server = nullptr;
  });
}

const bool kAgentRegistered = harness::cli::register_commands("agent", add_agent);

}  // namespace
