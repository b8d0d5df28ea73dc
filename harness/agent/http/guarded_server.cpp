// The agent's guarded HTTP(S) servers (guarded_server.hpp): httplib's servers behind the
// connection guard, each connection on a thread of its own.
#include "harness/agent/http/guarded_server.hpp"

#include "harness/agent/http/connection_guard.hpp"
#include "harness/agent/http/connection_threads.hpp"

#include <sys/socket.h>

#include <memory>

namespace harness::agent {

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
