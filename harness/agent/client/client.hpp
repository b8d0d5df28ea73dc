#pragma once
// libcurl client of the agent HTTP API (harness/agent/API.md, version 1).
//
// Timeouts on every request; retries with exponential backoff only for GET (idempotent:
// health, qualification, status, bundle); POST (submit, cancel) is sent once. Every request
// returns a Reply<T> (reply.hpp): its value, or which expected failure (400 with the field,
// 401, 404, 409, 412 with the reasons, no answer, an untrusted TLS peer, another status, an
// unreadable answer) with a message naming the agent URL and what to check. Exceptions only
// for bad construction (URL, TLS options, token file), an invalid case id (never sent) and
// local I/O (the bundle's file cannot be written).
#include "harness/agent/client/loopback.hpp"  // url_is_loopback: the plain-HTTP rule for a URL
#include "harness/agent/client/reply.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace harness::agent {

/// GET /v1/cases/{id}: state queued|running|completed|infra_failed|cancelled,
/// phase setup|warmup|pressure|recovery|restoration|done, error (empty when null).
struct CaseStatus {
  std::string case_id, state, phase, error;
  bool finished() const {
    return state == "completed" || state == "lost" || state == "infra_failed" || state == "cancelled";
  }
};

/// Timeouts and retry policy. Defaults suit a TCG guest behind qemu user networking.
struct ClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{30000};   ///< whole request (JSON calls)
  std::chrono::milliseconds download_timeout{600000}; ///< bundle download
  int get_attempts = 4;                               ///< tries for GET (1 = no retry)
  std::chrono::milliseconds backoff{250};             ///< first retry delay, doubled each retry
  /// https:// only. CA bundle (PEM) that signed the agent's certificate; empty = the
  /// system's CA store (unless a pin is given, see below).
  std::string tls_ca_file;
  /// https:// only. SHA-256 of the agent certificate's public key (SPKI), base64, with or
  /// without curl's "sha256//" prefix (spki_pin_sha256 in tls_pin.hpp, or `harness fleet
  /// pin CERT`). Any other key is refused before the token is sent. With a pin and no
  /// CA file, the chain and host name are not checked (self-signed agent certificates):
  /// the pin alone authenticates the agent.
  std::string tls_pin_sha256;
  /// Allow http:// to a non-loopback host (the bearer token then crosses the network in
  /// clear text). Without it the constructor refuses such a URL.
  bool allow_plain_http = false;
};

/// Client of one agent. `token_file` is only used in error messages ("check token file F").
class AgentClient {
 public:
  /// Throws std::invalid_argument for an http:// URL to a non-loopback host without
  /// opt.allow_plain_http, and for TLS options on an http:// URL.
  AgentClient(std::string url, std::string token, std::string token_file = {}, ClientOptions opt = {});
  /// Reads the token (trimmed) from `token_file`; throws std::runtime_error naming the file
  /// when it cannot be read, is empty, or group/others may access it (mode & 077: "must be
  /// 0600", the agent's rule for its own token file, token.hpp).
  static AgentClient from_token_file(const std::string& url, const std::string& token_file, ClientOptions opt = {});

  /// GET /v1/health (no token needed): {"status","version","source_commit","busy","boot_id","unclean"};
  /// BadAnswer when the body is not a JSON object.
  Reply<nlohmann::json> health();
  /// GET /v1/qualification: the `harness qualify --json` report; BadAnswer when not JSON.
  Reply<nlohmann::json> qualification();
  /// POST /v1/cases: the case id the agent accepted. Rejected (400, field), Conflict (409),
  /// NotQualified (412, reasons), BadAnswer without a case_id. Not retried.
  Reply<std::string> submit(const nlohmann::json& spec);
  /// GET /v1/cases/{id}. NotFound (404) for a case the agent does not know. Throws
  /// std::invalid_argument for an invalid case id (never sent).
  Reply<CaseStatus> status(const std::string& case_id);
  /// GET /v1/cases/{id}?wait_ms=W&state=&phase= (API.md "Waiting for a change"): the
  /// agent answers once the case's state or phase differs from `seen`'s, the case is final,
  /// or `wait` (ms, at most 60000) has passed. The request may take `wait` plus
  /// request_timeout. An agent without this answers at once: callers must not assume the
  /// answer differs from `seen`. `wait` <= 0 is status(). Failures as status().
  Reply<CaseStatus> wait_status(const std::string& case_id, const CaseStatus& seen, std::chrono::milliseconds wait);
  /// GET /v1/cases/{id}/bundle into `path` (written to path.part, then renamed; removed on
  /// failure). Conflict (409: not finished), NotFound (404). Throws std::runtime_error when
  /// path.part cannot be written, std::invalid_argument for an invalid case id.
  Reply<Done> download_bundle(const std::string& case_id, const std::string& path);
  /// POST /v1/cases/{id}/cancel. Not retried.
  Reply<Done> cancel(const std::string& case_id);
  /// DELETE /v1/unclean (API.md "Unclean restoration"), once the operator fixed the VM: the
  /// mark the agent cleared. NotFound (404) when the VM was not marked. Not retried.
  Reply<nlohmann::json> clear_unclean();
  /// POST /v1/reboot: the boot id before the reboot ("" when the answer has none).
  /// OtherStatus 403 (agent started without --allow-reboot), Conflict (a case runs). Not retried.
  Reply<std::string> reboot();
  /// Reboots the VM through the agent and waits until its health answers with another
  /// boot id (polling every `poll`, at most `timeout`): {before, after} boot ids. The
  /// reboot's own failure, or Unreachable when the VM is not back in time.
  Reply<std::pair<std::string, std::string>> reboot_and_wait(std::chrono::seconds timeout,
                                                             std::chrono::milliseconds poll = std::chrono::milliseconds(2000));

  const std::string& url() const { return url_; }

 private:
  struct Response {
    long status = 0;
    std::string body;
  };
  /// `held`: how long the agent may hold the answer on purpose (a waiting status request);
  /// added to request_timeout. A failure only when no answer came (Unreachable, Untrusted):
  /// any HTTP status is a Response.
  Reply<Response> request(const std::string& method, const std::string& path, const std::string* body,
                          const std::string* to_file, bool auth, std::chrono::milliseconds held = {});
  Reply<Response> once(const std::string& method, const std::string& path, const std::string* body,
                       const std::string* to_file, bool auth, std::chrono::milliseconds held);
  Reply<CaseStatus> status_query(const std::string& case_id, const std::string& query, std::chrono::milliseconds held);
  /// The Failure for an answer `r` with an unexpected status (`what`: the request, in words).
  Failure http_failure(const std::string& what, const Response& r) const;
  /// The Failure for a success status whose body cannot be read.
  Failure bad_answer(const std::string& what, const Response& r) const;

  std::string url_, token_, token_file_;
  ClientOptions opt_;
  /// One libcurl handle kept across requests (copies of this client share it), so that its
  /// connection (and TLS session) to the agent is reused: the runner's 1 Hz status polls then
  /// cost the agent neither a new connection and its thread nor a TLS handshake each.
  /// A request finding it in use by another thread takes a handle of its own.
  struct Connection;
  std::shared_ptr<Connection> conn_;
};

}  // namespace harness::agent
