// ssh tunnels to a hypervisor's loopback port (tunnel.hpp).
#include "harness/pool/libvirt/tunnel.hpp"

#include "harness/kernel/spawn.hpp"
#include "harness/pool/pool.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace harness::pool::libvirt {

std::vector<std::string> tunnel_argv(const LibvirtUri& uri, int local_port, int remote_port) {
  if (!uri.tunnel()) throw std::invalid_argument("'" + uri.text + "' is not an ssh URI: no tunnel");
  if (uri.host.empty()) throw std::invalid_argument("'" + uri.text + "' has no host");
  // The same program libvirt runs for the connection (URI parameter command=, else ssh).
  std::vector<std::string> a = {uri.command.empty() ? "ssh" : uri.command, "-T", "-o", "BatchMode=yes", "-o", "ExitOnForwardFailure=yes",
                                "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4",
                                "-o", "LogLevel=ERROR"};
  if (uri.port > 0) a.insert(a.end(), {"-p", std::to_string(uri.port)});
  if (!uri.keyfile.empty()) a.insert(a.end(), {"-i", uri.keyfile, "-o", "IdentitiesOnly=yes"});
  if (!uri.known_hosts.empty()) a.insert(a.end(), {"-o", "UserKnownHostsFile=" + uri.known_hosts});
  if (uri.no_verify) a.insert(a.end(), {"-o", "StrictHostKeyChecking=no"});
  a.insert(a.end(), {"-L", "127.0.0.1:" + std::to_string(local_port) + ":127.0.0.1:" + std::to_string(remote_port)});
  a.push_back(uri.user.empty() ? uri.host : uri.user + "@" + uri.host);
  a.push_back("exec cat >/dev/null");
  return a;
}

namespace {

bool port_accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

std::string last_line_of(const std::string& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

}  // namespace

SshTunnel::SshTunnel(const LibvirtUri& uri, int local_port, int remote_port, const std::string& log_file, int timeout_s)
    : local_port_(local_port) {
  namespace hk = harness::kernel;
  hk::SpawnSpec spec;
  spec.argv = tunnel_argv(uri, local_port, remote_port);
  spec.stdin_to = hk::ChildStream::pipe();  // only this process holds the other end (tunnel.hpp)
  spec.stdout_to = hk::ChildStream::null();
  spec.stderr_to = hk::ChildStream::file(log_file, /*append=*/true, 0600);
  spec.group = hk::ChildGroup::NewGroup;  // a terminal's ^C reaches the runner, which stops its tunnels itself
  const hk::Spawned started = hk::spawn(spec);
  if (!started.ok()) throw PoolError("tunnel: " + started.message());
  pid_ = started.pid;
  stdin_fd_ = started.stdin_fd;
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    if (port_accepts(local_port)) return;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      ::close(stdin_fd_);
      stdin_fd_ = -1;
      const int code = hk::exit_code_of(status);
      throw PoolError("ssh tunnel to " + uri.text + " (127.0.0.1:" + std::to_string(local_port) + " -> hypervisor 127.0.0.1:" +
                      std::to_string(remote_port) + ") exited with status " + std::to_string(code) + ": " +
                      last_line_of(log_file) + " (log: " + log_file + ")");
    }
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(timeout_s)) {
      stop();
      throw PoolError("ssh tunnel to " + uri.text + ": 127.0.0.1:" + std::to_string(local_port) + " not open within " +
                      std::to_string(timeout_s) + " s (log: " + log_file + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

SshTunnel::SshTunnel(SshTunnel&& o) noexcept : pid_(o.pid_), stdin_fd_(o.stdin_fd_), local_port_(o.local_port_) {
  o.pid_ = -1;
  o.stdin_fd_ = -1;
}

SshTunnel& SshTunnel::operator=(SshTunnel&& o) noexcept {
  if (this != &o) {
    stop();
    pid_ = o.pid_;
    stdin_fd_ = o.stdin_fd_;
    local_port_ = o.local_port_;
    o.pid_ = -1;
    o.stdin_fd_ = -1;
  }
  return *this;
}

SshTunnel::~SshTunnel() { stop(); }

bool SshTunnel::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == 0) return true;
  pid_ = -1;
  return false;
}

void SshTunnel::stop() noexcept {
  if (stdin_fd_ >= 0) {
    ::close(stdin_fd_);
    stdin_fd_ = -1;
  }
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  int status = 0;
  for (int i = 0; i < 20; ++i) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace harness::pool::libvirt
