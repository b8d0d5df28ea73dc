#pragma once
// The runner's way to a guest's agent on a remote hypervisor (ours; README.md "How the
// runner reaches the agents"): the guest's agent port is forwarded by qemu to the
// hypervisor's loopback address only, and the runner reaches it through
//   ssh -L 127.0.0.1:LOCAL:127.0.0.1:REMOTE [-p PORT] [-i KEY] [USER@]HOST 'exec cat >/dev/null'
// with the user, host, port, key (keyfile=), known_hosts=, no_verify= and ssh program
// (command=) of the libvirt qemu+ssh URI. Nothing listens on the
// lab network, the token and the case traffic are encrypted by ssh, and the runner's end is
// its own loopback (so http:// is allowed, as for local guests). The remote command reads
// ssh's stdin, which is a pipe only this process holds: when the runner dies, even by
// kill -9, the pipe closes, `cat` ends and so does the tunnel.
#include "harness/pool/libvirt/config.hpp"

#include <string>
#include <vector>

namespace harness::pool::libvirt {

/// The ssh argv of a tunnel from 127.0.0.1:`local_port` here to 127.0.0.1:`remote_port`
/// on the URI's host (BatchMode: never prompts; ExitOnForwardFailure: a port already in use
/// ends ssh at once; keepalives every 15 s). Throws std::invalid_argument when the URI has
/// no ssh transport or no host.
std::vector<std::string> tunnel_argv(const LibvirtUri& uri, int local_port, int remote_port);

/// One running tunnel (ssh child process). Movable, not copyable; the destructor stops it.
class SshTunnel {
 public:
  SshTunnel() = default;
  /// Starts ssh (stderr appended to `log_file`) and waits until 127.0.0.1:`local_port`
  /// accepts connections, at most `timeout_s`. Throws harness::pool::PoolError with the
  /// log's last line when ssh exits or the port does not open in time.
  SshTunnel(const LibvirtUri& uri, int local_port, int remote_port, const std::string& log_file, int timeout_s = 30);
  SshTunnel(SshTunnel&& o) noexcept;
  SshTunnel& operator=(SshTunnel&& o) noexcept;
  SshTunnel(const SshTunnel&) = delete;
  SshTunnel& operator=(const SshTunnel&) = delete;
  ~SshTunnel();

  /// SIGTERM, then SIGKILL after 2 s; reaps ssh. No-op when not running.
  void stop() noexcept;
  /// ssh still runs (reaps it when it has exited).
  bool running();
  int local_port() const { return local_port_; }
  int pid() const { return pid_; }

 private:
  int pid_ = -1;
  int stdin_fd_ = -1;
  int local_port_ = 0;
};

}  // namespace harness::pool::libvirt
