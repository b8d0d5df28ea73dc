// SshTunnel with a stand-in for ssh (the URI's command=): a tunnel whose port opens, one whose
// ssh exits (status and the log's last line in the error), one whose program cannot be
// started (the start's failure, not an exit status 127), and stop() by closing ssh's stdin.
#include "harness/pool/libvirt/tunnel.hpp"

#include "harness/pool/pool.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace lv = harness::pool::libvirt;

namespace {

lv::LibvirtUri ssh_uri(const std::string& command) {
  lv::LibvirtUri u;
  u.text = "qemu+ssh://lab1/system";
  u.driver = "qemu";
  u.transport = "ssh";
  u.host = "lab1";
  u.path = "/system";
  u.command = command;
  return u;
}

std::string script(const test_support::TempDir& d, const std::string& name, const std::string& body) {
  const std::string path = d / name;
  std::ofstream(path) << "#!/bin/sh\n" << body;
  ::chmod(path.c_str(), 0755);
  return path;
}

/// A port nothing listens on now (bound to port 0, then closed).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string error_of(const lv::LibvirtUri& u, const std::string& log) {
  try {
    lv::SshTunnel t(u, free_port(), 7000, log, 30);
  } catch (const harness::pool::PoolError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(SshTunnel, OpensAndStopsWhenItsStdinCloses) {
  test_support::TempDir d("hk-tunnel");
  // Listens on the -L port, then waits for end of file on stdin, as `cat >/dev/null` does.
  const std::string fake = script(d, "ssh",
                                  "exec /usr/bin/python3 -c '\n"
                                  "import socket, sys\n"
                                  "a = sys.argv[sys.argv.index(\"-L\") + 1].split(\":\")\n"
                                  "s = socket.socket(); s.bind((a[0], int(a[1]))); s.listen()\n"
                                  "sys.stdin.buffer.read()\n' \"$@\"\n");
  const int port = free_port();
  lv::SshTunnel t(ssh_uri(fake), port, 7000, d / "tunnel.log", 30);
  EXPECT_EQ(t.local_port(), port);
  EXPECT_TRUE(t.running());
  const int pid = t.pid();
  EXPECT_EQ(::getpgid(pid), pid);  // its own process group
  t.stop();
  EXPECT_FALSE(t.running());
  EXPECT_EQ(t.pid(), -1);
}

TEST(SshTunnel, AnSshThatExitsIsReportedWithItsStatusAndLastLogLine) {
  test_support::TempDir d("hk-tunnel");
  const std::string fake = script(d, "ssh", "echo 'ssh: connect to host lab1 port 22: No route to host' >&2\nexit 255\n");
  const std::string log = d / "tunnel.log";
  const std::string m = error_of(ssh_uri(fake), log);
  EXPECT_NE(m.find("exited with status 255: ssh: connect to host lab1 port 22: No route to host (log: " + log + ")"),
            std::string::npos)
      << m;
  struct stat st{};
  ASSERT_EQ(::stat(log.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(SshTunnel, AProgramThatCannotBeStartedIsNamed) {
  test_support::TempDir d("hk-tunnel");
  EXPECT_EQ(error_of(ssh_uri("/nonexistent/ssh"), d / "tunnel.log"),
            "tunnel: cannot start '/nonexistent/ssh': exec: No such file or directory");
  EXPECT_EQ(error_of(ssh_uri(""), d / "missing-dir/tunnel.log"),
            "tunnel: cannot start 'ssh': open " + (d / "missing-dir/tunnel.log") + ": No such file or directory");
}
