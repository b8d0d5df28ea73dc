#pragma once
// The fixture of the agent process tests (agent_process_test.cpp, agent_hostile_test.cpp):
// a real `harness agent` on 127.0.0.1 (plain HTTP or TLS) whose executor is a tiny script
// (--executor, a documented test override) that appends a line to a marker file when it
// runs, and raw-socket helpers that send exactly the bytes a test chooses.
#include "results/db.hpp"
#include "tests/common/agent_support.hpp"
#include "tests/common/slurp.hpp"
#include "tests/unit/agent/test_token.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <openssl/ssl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace agent_test {

namespace fs = std::filesystem;
using nlohmann::json;


inline void write_exec(const fs::path& p, const std::string& text) {
  { std::ofstream(p) << text; }
  chmod(p.c_str(), 0755);
}

using test_support::valid_spec;

/// Writes a self-signed EC certificate for 127.0.0.1 and its key into `dir` (openssl CLI).
inline void make_cert(const fs::path& dir, const std::string& stem) {
  const std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
                          "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " +
                          (dir / (stem + ".key")).string() + " -out " + (dir / (stem + ".pem")).string() +
                          " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  chmod((dir / (stem + ".key")).c_str(), 0600);
}

/// An agent process on 127.0.0.1; `tls` (set before start()) serves HTTPS with a fresh
/// self-signed certificate (dir/agent.pem), and every client then verifies against it.
class AgentFixture : public ::testing::Test {
 protected:
  bool tls = false;
  fs::path dir;
  fs::path marker, token_file, state;
  pid_t pid = -1;
  int port = -1;

  void SetUp() override {
    std::signal(SIGPIPE, SIG_IGN);  // the agent may close a TLS connection while a client writes
    // A parameterised test's name holds a '/' ("Name/Tls"): flattened, so that TearDown
    // removes the whole directory rather than leaving an empty parent in /tmp.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '-');
    dir = fs::temp_directory_path() / ("agent-test-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    marker = dir / "ran.txt";
    state = dir / "state";
    token_file = dir / "token";
    write_token_file(dir.string(), std::string(kToken) + "\n");
    fs::create_directories(dir / "bundles");
    // Fake executor: records that it ran (with its case id), sleeps $(cat sleep_s), and
    // copies bundles/<id>.db (prepared by make_bundle) to DIR/<id>.db unless no_bundle
    // exists. Args: --spec FILE --out DIR.
    { std::ofstream(dir / "sleep_s") << "0"; }
    write_exec(dir / "executor.sh",
               "#!/bin/sh\n"
               "out=\"$4\"; id=$(basename \"$(dirname \"$out\")\")\n"
               "echo \"$id\" >> " + marker.string() + "\n"
               "echo pressure > \"$out/phase\"\n"
               "sleep $(cat " + (dir / "sleep_s").string() + ")\n"
               "[ -e " + (dir / "no_bundle").string() + " ] && exit 3\n"
               "cp " + (dir / "bundles").string() + "/$id.db \"$out/$id.db\"\n");
    write_exec(dir / "qualify-ok.sh", "#!/bin/sh\necho '{\"passed\":true,\"checks\":[]}'\n");
    make_cert(dir, "agent");
    write_exec(dir / "qualify-bad.sh",
               "#!/bin/sh\necho '{\"passed\":false,\"checks\":[{\"name\":\"memory_reclaim\",\"required\":true,"
               "\"passed\":false,\"found\":\"memory.reclaim missing\"}]}'\n");
  }

  // A bundle in the results schema holding case `id` with `status` (what `harness case run` writes).
  void make_bundle(const std::string& id, const std::string& status = "completed") {
    results::Db db((dir / "bundles" / (id + ".db")).string(), results::Db::Mode::Create);
    results::Stmt st(db, "INSERT INTO cases(case_id,campaign,vm,regime,repeat,configuration,status,spec_json) "
                         "VALUES(?,'smoke','vm0','fast-structured',1,'static-zram',?,'{}')");
    st.bind(1, id).bind(2, status);
    st.run();
  }

  void TearDown() override {
    stop();
    fs::remove_all(dir);
  }

  static std::string harness_bin() { return std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness"; }

  // Starts the agent on a free port; returns false (and the output) when it refuses to start.
  // An empty `qualify` runs the agent's own (in-process) qualification.
  bool start(const std::string& qualify = "qualify-ok.sh", std::string* output = nullptr,
             std::vector<std::string> extra = {}) {
    int p[2];
    if (pipe(p) != 0) return false;
    std::vector<std::string> argv = {harness_bin(), "agent", "--bind", "127.0.0.1", "--port", "0",
                                     "--token-file", token_file.string(), "--state-dir", state.string(),
                                     "--executor", (dir / "executor.sh").string(), "--no-oom-protect",
                                     "--cancel-grace-s", "5"};
    if (!qualify.empty()) argv.insert(argv.end(), {"--qualify-cmd", (dir / qualify).string()});
    if (tls) argv.insert(argv.end(), {"--tls-cert", (dir / "agent.pem").string(), "--tls-key", (dir / "agent.key").string()});
    argv.insert(argv.end(), extra.begin(), extra.end());
    pid = fork();
    if (pid == 0) {
      dup2(p[1], 1);
      dup2(p[1], 2);
      close(p[0]);
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      execv(a[0], a.data());
      _exit(127);
    }
    close(p[1]);
    std::string out;
    char c;
    while (read(p[0], &c, 1) == 1) {
      out += c;
      if (c == '\n' && out.find("listening on") != std::string::npos) break;
    }
    close(p[0]);
    if (output) *output = out;
    auto pos = out.find("127.0.0.1:");
    if (pos == std::string::npos) {
      int st;
      waitpid(pid, &st, 0);
      pid = -1;
      return false;
    }
    port = std::stoi(out.substr(pos + 10));
    return true;
  }

  void stop() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      int st;
      waitpid(pid, &st, 0);
      pid = -1;
    }
  }

  httplib::Client client(bool with_token = true, const std::string& token = kToken) {
    if (!tls) return test_support::agent_client(port, with_token ? token : std::string());
    httplib::Client c("https://127.0.0.1:" + std::to_string(port));
    c.set_ca_cert_path((dir / "agent.pem").c_str());
    c.enable_server_certificate_verification(true);
    c.set_read_timeout(30, 0);
    if (with_token) c.set_default_headers({{"Authorization", "Bearer " + token}});
    return c;
  }

  /// raw_request over this fixture's transport.
  std::string raw(const std::string& head, const std::vector<std::string>& chunks,
                  std::chrono::milliseconds gap = std::chrono::milliseconds(0));

  std::vector<std::string> runs() {
    std::vector<std::string> r;
    std::ifstream in(marker);
    std::string l;
    while (std::getline(in, l)) r.push_back(l);
    return r;
  }

  // Polls GET /v1/cases/<id> until the state is final; returns the last status.
  json wait_final(const std::string& id, int seconds = 60) {
    auto c = client();
    return test_support::wait_final(c, id, std::chrono::seconds(seconds));
  }
};

/// A TCP socket connected to 127.0.0.1:`port`, or -1 (socket or connect failed).
inline int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// Sends one raw HTTP request to 127.0.0.1:`port`: `head` (request line + headers, without
/// the blank line), then `chunks` of the body, `gap` apart, writing until the agent stops
/// reading. Returns the status line of the first response ("" when none came).
inline std::string raw_request(int port, bool tls, const std::string& head, const std::vector<std::string>& chunks,
                        std::chrono::milliseconds gap = std::chrono::milliseconds(0)) {
  const int fd = connect_loopback(port);
  if (fd < 0) return "";
  timeval tv{60, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  // Over TLS the same bytes go through an OpenSSL session (certificate not checked here:
  // these tests are about the body limit, not about authentication of the agent).
  SSL_CTX* ctx = nullptr;
  SSL* ssl = nullptr;
  if (tls) {
    ctx = SSL_CTX_new(TLS_client_method());
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_connect(ssl) != 1) {
      SSL_free(ssl);
      SSL_CTX_free(ctx);
      ::close(fd);
      return "";
    }
  }
  auto put = [&](const std::string& b) {
    return tls ? SSL_write(ssl, b.data(), static_cast<int>(b.size())) > 0
               : ::send(fd, b.data(), b.size(), MSG_NOSIGNAL) >= 0;
  };
  put(head + "\r\n\r\n");
  for (const auto& c : chunks) {
    if (!put(c)) break;  // the agent closed: it stopped reading
    if (gap.count()) std::this_thread::sleep_for(gap);
  }
  if (!tls) ::shutdown(fd, SHUT_WR);
  std::string resp;
  char buf[4096];
  for (;;) {
    const int n = tls ? SSL_read(ssl, buf, sizeof buf) : static_cast<int>(::recv(fd, buf, sizeof buf, 0));
    if (n <= 0) break;
    resp.append(buf, static_cast<std::size_t>(n));
    if (resp.find("\r\n") != std::string::npos) break;
  }
  if (tls) {
    SSL_free(ssl);
    SSL_CTX_free(ctx);
  }
  ::close(fd);
  return resp.substr(0, resp.find("\r\n"));
}

inline std::string AgentFixture::raw(const std::string& head, const std::vector<std::string>& chunks,
                              std::chrono::milliseconds gap) {
  return raw_request(port, tls, head, chunks, gap);
}

/// `total` bytes of body in HTTP/1.1 chunked encoding, in 1 MiB chunks.
inline std::vector<std::string> chunked_body(std::size_t total) {
  std::vector<std::string> out;
  const std::size_t piece = 1 << 20;
  char size_line[32];
  std::snprintf(size_line, sizeof size_line, "%zx\r\n", piece);
  for (std::size_t sent = 0; sent < total; sent += piece) out.push_back(size_line + std::string(piece, 'x') + "\r\n");
  out.push_back("0\r\n\r\n");
  return out;
}

// Live (non-zombie) processes whose process group is `pgid`, from /proc/<pid>/stat.
inline std::vector<pid_t> live_group_members(pid_t pgid) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = test_support::slurp(e.path() / "stat");
    auto rp = stat.rfind(')');
    if (rp == std::string::npos) continue;
    std::istringstream rest(stat.substr(rp + 2));
    char state = 0;
    long ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    if (pgrp == pgid && state != 'Z' && state != 'X') out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

inline pid_t read_pid(const fs::path& p) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream in(p);
    pid_t v = 0;
    if (in >> v && v > 0) return v;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

}  // namespace agent_test
