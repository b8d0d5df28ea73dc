// The agent HTTP server (see server.hpp and API.md): only the wiring of its rooms; README.md
// says which file holds which idea.
#include "harness/agent/routes/server.hpp"

#include "harness/agent/http/answer.hpp"
#include "harness/agent/http/auth_routing.hpp"
#include "harness/agent/cases/case_end.hpp"
#include "harness/agent/routes/case_routes.hpp"
#include "harness/agent/cases/executor_command.hpp"
#include "harness/agent/cases/executor_watcher.hpp"
#include "harness/agent/routes/qualification.hpp"
#include "harness/agent/routes/reboot.hpp"
#include "harness/agent/cases/registry.hpp"
#include "harness/agent/cases/restart_settling.hpp"
#include "harness/agent/cases/submission.hpp"
#include "harness/agent/http/token.hpp"
#include "harness/agent/http/transport_limits.hpp"
#include "harness/agent/cases/unclean_mark.hpp"
#include "harness/agent/routes/vm_status.hpp"

#include <httplib.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace fs = std::filesystem;

namespace harness::agent {
namespace {

/// The token of `o` (load_token), checked before anything else.
std::string token_of(const AgentOptions& o) {
  if (o.token_file.empty()) throw std::runtime_error("--token-file is required");
  return load_token(o.token_file);
}

/// `o` checked (server.hpp, Server::Server), its state dir created and made absolute.
AgentOptions checked_options(AgentOptions o) {
  if (o.state_dir.empty()) throw std::runtime_error("--state-dir is required");
  if (o.max_body_bytes == 0) throw std::runtime_error("--max-body-bytes must be > 0");
  if (o.data_dir.empty() || o.data_dir.front() != '/')
    throw std::runtime_error("--data-dir " + o.data_dir + ": must be an absolute directory");
  for (const auto& a : o.allow_paths)
    if (a.empty() || a.front() != '/') throw std::runtime_error("--allow-path " + a + ": must be an absolute directory");
  std::error_code ec;
  fs::create_directories(fs::path(o.state_dir) / "cases", ec);
  if (ec) throw std::runtime_error("--state-dir " + o.state_dir + ": " + ec.message());
  o.state_dir = fs::absolute(o.state_dir).string();
  return o;
}

/// data_dir + allow_paths, normalised (API.md "Paths").
std::vector<std::string> allowed_dirs_of(const AgentOptions& o) {
  std::vector<std::string> dirs{fs::path(o.data_dir).lexically_normal().string()};
  for (const auto& a : o.allow_paths) dirs.push_back(fs::path(a).lexically_normal().string());
  return dirs;
}

/// The executor command prefix: --executor, else default_executor (said on stderr).
std::vector<std::string> executor_of(const AgentOptions& o) {
  if (o.executor.empty()) {
    const ExecutorCommand chosen = default_executor(fs::read_symlink("/proc/self/exe").string());
    std::fprintf(stderr, "agent: %s\n", chosen.why.c_str());
    return chosen.argv;
  }
  auto argv = split_command(o.executor);
  if (argv.empty()) throw std::runtime_error("--executor is empty");
  return argv;
}

/// Writes -1000 to /proc/self/oom_score_adj (a warning when it cannot).
void protect_from_oom_killer() {
  std::ofstream adj("/proc/self/oom_score_adj");
  adj << "-1000\n";
  adj.flush();
  if (!adj) std::fprintf(stderr, "agent: WARNING: cannot set oom_score_adj -1000 (needs CAP_SYS_RESOURCE)\n");
}

}  // namespace

struct Server::Impl {
  explicit Impl(AgentOptions o)
      : token(token_of(o)),
        opts(checked_options(std::move(o))),
        allowed_dirs(allowed_dirs_of(opts)),
        reg(opts.state_dir),
        mark(opts.state_dir),
        watcher(reg, [this](const std::shared_ptr<CaseRec>& c, int code) { finish_case(reg, mark, c, code); }),
        rebooter(reg, opts.allow_reboot, opts.reboot_cmd) {}
  ~Impl() {
    if (wake_fd >= 0) ::close(wake_fd);
  }

  const std::string token;  // before opts: the token file is judged first
  const AgentOptions opts;
  const std::vector<std::string> allowed_dirs;
  std::vector<std::string> executor;
  Registry reg;
  UncleanMark mark;
  OldExecutors old;
  ExecutorWatcher watcher;
  Rebooter rebooter;
  std::unique_ptr<httplib::Server> server;  // GuardedServer or GuardedSslServer
  std::function<void()> deepen_backlog;
  int bound_port = -1;
  // Written by stop() (write(2) is async-signal-safe) and by serve() when the accept loop
  // returns, so that serve()'s stop applier sleeps in poll(2) instead of waking at 50 Hz for
  // the agent's whole life (in a TCG guest those wakes were CPU charged to the case).
  int wake_fd = ::eventfd(0, EFD_CLOEXEC);
  void wake() const {
    const std::uint64_t one = 1;
    if (wake_fd >= 0) (void)!::write(wake_fd, &one, sizeof one);
  }

  SubmissionContext submission() { return {reg, opts, allowed_dirs, mark, executor, watcher}; }
  void wire_routes();
};

void Server::Impl::wire_routes() {
  httplib::Server& http = *server;
  const std::size_t max_body = opts.max_body_bytes;
  // Before any body is read, in routing and instead of an Expect: 100-continue alike.
  const RefuseUnread refuse_unread = [this, max_body](const httplib::Request& req, httplib::Response& res) {
    return refuse_body_before_reading(req, res, max_body) || refuse_unauthorised_or_unknown(req, res, token);
  };
  http.set_pre_routing_handler([refuse_unread](const httplib::Request& req, httplib::Response& res) {
    return refuse_unread(req, res) ? httplib::Server::HandlerResponse::Handled
                                   : httplib::Server::HandlerResponse::Unhandled;
  });
  install_transport_answers(http, refuse_unread);
  // Every body is read by read_request_body (the library's own limit only sees Content-Length);
  // a POST that takes none still has any body bounded.
  auto body_ok = [this](const httplib::Request&, httplib::Response& res, const httplib::ContentReader& rd,
                        std::string& body) {
    return read_request_body(rd, res, opts.max_body_bytes, opts.body_deadline_s, body);
  };
  http.Get("/v1/health", [this](const httplib::Request&, httplib::Response& res) {
    old.refresh(reg);
    serve_health(reg, mark, res);
  });
  http.Get("/v1/qualification", [this](const httplib::Request&, httplib::Response& res) {
    old.refresh(reg);
    serve_qualification(reg, opts, res);
  });
  http.Post("/v1/cases", [this, body_ok](const httplib::Request& req, httplib::Response& res,
                                          const httplib::ContentReader& rd) {
    std::string body;
    if (!body_ok(req, res, rd, body)) return;
    old.refresh(reg);
    submit_case(submission(), body, res);
  });
  http.Post("/v1/reboot", [this, body_ok](const httplib::Request& req, httplib::Response& res,
                                           const httplib::ContentReader& rd) {
    std::string body;
    if (has_body_framing(req) && !body_ok(req, res, rd, body)) return;
    old.refresh(reg);
    rebooter.request(res);
  });
  http.Delete("/v1/unclean", [this](const httplib::Request&, httplib::Response& res) { serve_clear_unclean(mark, res); });
  http.Get(R"(/v1/cases/.*)",
           [this](const httplib::Request& req, httplib::Response& res) { serve_case_path(reg, watcher, req, res); });
  http.Post(R"(/v1/cases/.*)", [this, body_ok](const httplib::Request& req, httplib::Response& res,
                                                const httplib::ContentReader& rd) {
    std::string body;
    if (has_body_framing(req) && !body_ok(req, res, rd, body)) return;
    serve_case_path(reg, watcher, req, res);
  });
}

Server::Server(AgentOptions opts) : impl_(std::make_unique<Impl>(std::move(opts))) {
  Impl& m = *impl_;
  // Before anything answers: what an earlier agent run left unfinished.
  for (const auto& id : settle_unfinished_cases(m.reg, m.mark, m.old))
    std::fprintf(stderr, "agent: case %s was left unfinished by an earlier agent run: settled\n", id.c_str());
  m.server = make_http_server(m.opts, m.deepen_backlog);
  // A client that closes a TLS connection early must not kill the agent: OpenSSL writes
  // with write(2), which raises SIGPIPE (plain sockets use MSG_NOSIGNAL).
  std::signal(SIGPIPE, SIG_IGN);
  m.executor = executor_of(m.opts);
  if (m.opts.oom_protect) protect_from_oom_killer();
  m.wire_routes();
}

Server::~Server() { stop(); }

int Server::bind() {
  Impl& m = *impl_;
  if (m.opts.port == 0) {
    m.bound_port = m.server->bind_to_any_port(m.opts.bind);
  } else {
    m.bound_port = m.server->bind_to_port(m.opts.bind, m.opts.port) ? m.opts.port : -1;
  }
  if (m.bound_port <= 0) throw std::runtime_error("agent: cannot bind " + m.opts.bind + ":" + std::to_string(m.opts.port));
  m.deepen_backlog();
  return m.bound_port;
}

void Server::serve() {
  // httplib's stop() is a no-op until listen_after_bind() has marked the server running,
  // so a SIGTERM that arrives between bind() and the accept loop would be lost and the
  // agent would never exit. stop() only sets a flag; this thread applies it once the
  // server runs (or at once if it already does). It sleeps until stop() or the end of the
  // accept loop writes the wake eventfd, and polls every 20 ms only between a stop() and the
  // moment the server runs.
  Impl& m = *impl_;
  std::atomic<bool> served{false};
  std::thread applier([&m, &served] {
    while (!served.load() && !m.reg.stopping.load()) {
      pollfd p{m.wake_fd, POLLIN, 0};
      if (m.wake_fd < 0) {  // no eventfd: the former 20 ms polling
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      } else {
        (void)::poll(&p, 1, -1);  // EINTR or a wake: the loop condition decides
      }
    }
    {
      std::lock_guard<std::mutex> lk(m.reg.mu);
      m.reg.bump();  // waiting status requests answer now: the connections can close
    }
    while (!served.load()) {
      if (m.server->is_running()) {
        m.server->stop();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  if (!m.reg.stopping.load()) m.server->listen_after_bind();
  served.store(true);
  m.wake();
  applier.join();
}

void Server::stop() {
  impl_->reg.stopping.store(true);
  impl_->wake();
}

int Server::port() const { return impl_->bound_port; }

}  // namespace harness::agent
