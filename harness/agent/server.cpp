// The agent HTTP server (see server.hpp and API.md).
#include "harness/agent/server.hpp"

#include "harness/agent/body_reader.hpp"

#include "harness/agent/case_id.hpp"
#include "harness/agent/child.hpp"
#include "harness/agent/token.hpp"
#include "results/db.hpp"

#include <harness/build_info.hpp>

#ifdef HK_AGENT_HAVE_CASE_SPEC
#include "harness/case/spec.hpp"
#endif
#ifdef HK_AGENT_HAVE_QUALIFY
#include "qualify/qualify.hpp"
#endif

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/reboot.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <chrono>
#include <ctime>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;

namespace harness::agent {
namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void spit(const fs::path& p, const std::string& s) {
  fs::path tmp = p;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << s;
  }
  fs::rename(tmp, p);
}

/// The HTTP or HTTPS server for `o`, after the transport checks (server.hpp).
std::unique_ptr<httplib::Server> make_http_server(const AgentOptions& o) {
  const bool tls = !o.tls_cert_file.empty() || !o.tls_key_file.empty();
  if (!tls) {
    if (!is_loopback_address(o.bind) && !o.insecure_plain_http)
      throw std::runtime_error("--bind " + o.bind +
                               ": refusing plain HTTP on a non-loopback address (the bearer token would "
                               "cross the network in clear text); give --tls-cert and --tls-key, or "
                               "--insecure-plain-http for a network you trust");
    return std::make_unique<httplib::Server>();
  }
  if (o.tls_cert_file.empty() || o.tls_key_file.empty())
    throw std::runtime_error("--tls-cert and --tls-key go together (got only " +
                             std::string(o.tls_cert_file.empty() ? "--tls-key" : "--tls-cert") + ")");
  for (const auto& [flag, file] : {std::pair{"--tls-cert", o.tls_cert_file}, std::pair{"--tls-key", o.tls_key_file}})
    if (::access(file.c_str(), R_OK) != 0)
      throw std::runtime_error(std::string(flag) + " " + file + ": cannot read");
  auto s = std::make_unique<httplib::SSLServer>(o.tls_cert_file.c_str(), o.tls_key_file.c_str());
  if (!s->is_valid())
    throw std::runtime_error("--tls-cert " + o.tls_cert_file + " / --tls-key " + o.tls_key_file +
                             ": not a usable PEM certificate and matching private key");
  return s;
}

void send_error(httplib::Response& res, int status, const std::string& msg,
                const std::string& field = "", const json& extra = json::object()) {
  json j = extra;
  j["error"] = msg;
  j["field"] = field.empty() ? json(nullptr) : json(field);
  res.status = status;
  res.set_content(j.dump(), "application/json");
}

// Runs `argv` and returns its stdout (for --qualify-cmd).
std::pair<int, std::string> capture(const std::vector<std::string>& argv) {
  std::vector<char*> a;  // built before fork: no allocation in the child (threaded server)
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(p[1], 1);
    close(p[0]);
    close(p[1]);
    execvp(a[0], a.data());
    _exit(127);
  }
  close(p[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  close(p[0]);
  return {wait_child(pid), out};
}

}  // namespace

/// A case known to the agent (in memory; mirrored in cases/<id>/status.json when done).
struct CaseRec {
  std::string id;
  std::string state = "queued";  // queued|running|completed|infra_failed|cancelled
  std::string error;             // "" = null
  fs::path dir;
  pid_t pid = -1;
  int exit_code = -1;
  bool cancel_requested = false;
  std::chrono::steady_clock::time_point cancel_at{};
};

/// True when the request announces a body (Content-Length or Transfer-Encoding). A POST
/// with neither has no body (RFC 9112 section 6.3); httplib would instead read until the
/// client closes, so a plain `curl -X POST` to a body-less endpoint would wait for its read
/// timeout and fail.
static bool has_body_framing(const httplib::Request& req) {
  return req.has_header("Content-Length") || req.has_header("Transfer-Encoding");
}

struct Server::Impl {
  AgentOptions opts;
  std::string token;
  std::unique_ptr<httplib::Server> server;  // httplib::SSLServer when TLS is on
  httplib::Server& http_ref() { return *server; }
  std::mutex mu;
  std::map<std::string, std::shared_ptr<CaseRec>> cases;
  std::string busy_id;  // "" = idle
  std::thread watcher;
  json last_report;     // last qualification report (served while busy)
  int bound_port = -1;
  std::vector<std::string> executor;
  std::atomic<bool> stop_requested{false};  // set by stop(); async-signal-safe
  std::thread rebooter;                     // POST /v1/reboot: the delayed reboot

  /// /proc/sys/kernel/random/boot_id without the newline; "" when unreadable.
  static std::string boot_id() {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(in, id);
    return id;
  }

  // POST /v1/reboot: refused while a case runs; otherwise the agent answers 202, marks
  // itself busy with "(reboot)" so no case starts in between, and reboots 500 ms later
  // (after the answer is out): `systemctl reboot` under systemd, else sync() +
  // reboot(RB_AUTOBOOT); or the test override.
  void reboot(httplib::Response& res) {
    if (!opts.allow_reboot)
      return send_error(res, 403, "reboot not allowed on this agent (start it with --allow-reboot)", "");
    {
      std::lock_guard<std::mutex> lk(mu);
      if (!busy_id.empty())
        return send_error(res, 409, "busy: case " + busy_id + " is running", "", {{"running_case_id", busy_id}});
      busy_id = "(reboot)";
    }
    const std::string before = boot_id();
    res.status = 202;
    res.set_content(json{{"boot_id", before}, {"reboot_in_ms", 500}}.dump(), "application/json");
    if (rebooter.joinable()) rebooter.join();
    rebooter = std::thread([this] {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      std::fflush(nullptr);
      if (!opts.reboot_cmd.empty()) {
        const int rc = std::system(opts.reboot_cmd.c_str());
        std::fprintf(stderr, "agent: reboot command exited with %d\n", rc);
      } else {
        // Under systemd an orderly reboot (services stopped, file systems unmounted); a
        // plain init (the local guests' /init) or a failed systemctl: sync + reboot(2).
        if (fs::exists("/run/systemd/system") && std::system("systemctl reboot") == 0) return;
        ::sync();
        if (::reboot(RB_AUTOBOOT) != 0)
          std::fprintf(stderr, "agent: reboot(RB_AUTOBOOT) failed: %s\n", std::strerror(errno));
      }
      std::lock_guard<std::mutex> lk(mu);  // still here (a test command, or a failed reboot)
      if (busy_id == "(reboot)") busy_id.clear();
    });
  }

  fs::path case_dir(const std::string& id) const { return fs::path(opts.state_dir) / "cases" / id; }

  // --- unclean restoration (issue 13 item 4) ----------------------------------
  // A case whose restoration was unclean leaves <state>/unclean.json; until it is cleared
  // (DELETE /v1/unclean, or removing the file) every submission gets 412: the VM's state
  // is nobody's next case's problem.
  fs::path unclean_path() const { return fs::path(opts.state_dir) / "unclean.json"; }
  json unclean() const {
    if (!fs::exists(unclean_path())) return nullptr;
    try {
      return json::parse(slurp(unclean_path()));
    } catch (const std::exception& e) {
      return json{{"case_id", nullptr}, {"problems", {std::string("unclean.json unreadable: ") + e.what()}}};
    }
  }
  static std::string unclean_message(const json& u) {
    std::string problems;
    if (u.contains("problems") && u["problems"].is_array())
      for (const auto& p : u["problems"]) problems += (problems.empty() ? "" : "; ") + p.get<std::string>();
    return "VM unusable: the restoration of case " + (u["case_id"].is_string() ? u["case_id"].get<std::string>() : "?") +
           " was unclean (" + problems + "); fix the VM (or reboot it), then clear the mark with DELETE /v1/unclean";
  }
  /// After a case: marks the VM unusable when the bundle's restoration row says unclean.
  void mark_if_unclean(const CaseRec& c, results::Db& db) {
    results::Stmt r(db, "SELECT clean, detail_json FROM restoration");
    if (!r.step() || r.is_null(0) || r.int64(0) != 0) return;
    json problems = json::array();
    try {
      problems = json::parse(r.text(1)).at("verdict").at("problems");
    } catch (const std::exception&) {
    }
    json u{{"case_id", c.id}, {"problems", problems}, {"marked_unix_s", static_cast<std::int64_t>(::time(nullptr))}};
    try {
      spit(unclean_path(), u.dump(2) + "\n");
    } catch (const std::exception&) {
    }
  }

  // --- qualification --------------------------------------------------------
  json qualify(const std::string& pinned, const std::string& swapfile, unsigned vcpus,
               std::uint64_t memory_mib) {
    if (!opts.qualify_cmd.empty()) {
      auto [rc, out] = capture(split_command(opts.qualify_cmd));
      try {
        json j = json::parse(out);
        if (!j.is_object() || !j.contains("passed")) throw std::runtime_error("no 'passed' field");
        return j;
      } catch (const std::exception& e) {
        return json{{"passed", false},
                    {"checks", json::array()},
                    {"reasons", {"qualification command '" + opts.qualify_cmd + "' exited " +
                                 std::to_string(rc) + " without a JSON report: " + e.what()}}};
      }
    }
#ifdef HK_AGENT_HAVE_QUALIFY
    qualify::Options q;
    q.swapfile_path = swapfile;
    q.vcpus = vcpus;
    q.memory_mib = memory_mib;
    q.pinned_commit = pinned;
    q.disk_path = opts.state_dir;
    return qualify::run(q).to_json();
#else
    (void)pinned; (void)swapfile; (void)vcpus; (void)memory_mib;
    return json{{"passed", false}, {"checks", json::array()},
                {"reasons", {"this build has no hk_qualify library and no --qualify-cmd"}}};
#endif
  }

  static json reasons_of(const json& report) {
    if (report.contains("reasons") && report["reasons"].is_array() && !report["reasons"].empty())
      return report["reasons"];
    json r = json::array();
    if (report.contains("checks") && report["checks"].is_array())
      for (const auto& c : report["checks"])
        if (c.is_object() && !c.value("passed", true) && c.value("required", true))
          r.push_back(c.value("name", "?") + ": " + c.value("found", ""));
    if (r.empty()) r.push_back("qualification report says passed=false");
    return r;
  }

  // --- case lifecycle ---------------------------------------------------------
  std::string phase_of(const CaseRec& c) const {
    if (c.state == "queued") return "setup";
    if (c.state != "running") return "done";
    std::string p = slurp(c.dir / "out" / "phase");
    while (!p.empty() && (p.back() == '\n' || p.back() == ' ')) p.pop_back();
    static const char* known[] = {"setup", "warmup", "pressure", "recovery", "restoration", "done"};
    for (const char* k : known)
      if (p == k) return p;
    return "setup";
  }

  json status_json(const CaseRec& c) const {
    return json{{"case_id", c.id},
                {"state", c.state},
                {"phase", phase_of(c)},
                {"error", c.error.empty() ? json(nullptr) : json(c.error)},
                {"exit_code", c.exit_code < 0 ? json(nullptr) : json(c.exit_code)}};
  }

  fs::path bundle_path(const CaseRec& c) const { return c.dir / "out" / (c.id + ".db"); }

  // A case from an earlier agent run (status.json on disk), or nullptr.
  std::shared_ptr<CaseRec> lookup(const std::string& id) {
    auto it = cases.find(id);
    if (it != cases.end()) return it->second;
    fs::path d = case_dir(id);
    if (!fs::exists(d / "status.json")) return nullptr;
    try {
      json j = json::parse(slurp(d / "status.json"));
      auto c = std::make_shared<CaseRec>();
      c->id = id;
      c->dir = d;
      c->state = j.value("state", "infra_failed");
      c->error = j["error"].is_string() ? j["error"].get<std::string>() : "";
      c->exit_code = j["exit_code"].is_number() ? j["exit_code"].get<int>() : -1;
      cases[id] = c;
      return c;
    } catch (const std::exception&) {
      return nullptr;
    }
  }

  void finish(const std::shared_ptr<CaseRec>& c, int code) {
    std::lock_guard<std::mutex> lk(mu);
    c->exit_code = code;
    c->pid = -1;
    fs::path b = bundle_path(*c);
    if (c->cancel_requested) {
      c->state = "cancelled";
      c->error = "cancelled by request";
    } else if (fs::exists(b)) {
      try {
        results::Db db(b.string(), results::Db::Mode::ReadOnly);
        results::Stmt st(db, "SELECT status, error FROM cases WHERE case_id = ?");
        st.bind(1, c->id);
        if (st.step()) {
          c->state = st.text(0) == "completed" ? "completed" : "infra_failed";
          c->error = st.opt_text(1).value_or("");
          mark_if_unclean(*c, db);
        } else {
          c->state = "infra_failed";
          c->error = "bundle " + b.string() + " has no row for this case";
        }
      } catch (const std::exception& e) {
        c->state = "infra_failed";
        c->error = std::string("bundle unreadable: ") + e.what();
      }
    } else {
      c->state = "infra_failed";
      c->error = "executor exited with code " + std::to_string(code) +
                 " without writing a bundle (see executor.log)";
    }
    try {
      spit(c->dir / "status.json", status_json(*c).dump(2) + "\n");
    } catch (const std::exception&) {
    }
    busy_id.clear();
  }

  void watch(std::shared_ptr<CaseRec> c, pid_t pid) {
    int status = 0;
    for (;;) {
      pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      if (w < 0 && errno != EINTR) {
        status = -1;
        break;
      }
      {
        std::lock_guard<std::mutex> lk(mu);
        if (c->cancel_requested && std::chrono::steady_clock::now() > c->cancel_at)
          signal_child(pid, SIGKILL);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    int code = status < 0 ? -1 : (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    // Cancelled: the leader may have exited on SIGTERM while others of its process group
    // ignore it; they get SIGKILL at the end of the grace too (the group id cannot be
    // reused while any member lives; only the group is signalled, never the reaped pid).
    bool cancelled = false;
    std::chrono::steady_clock::time_point kill_at;
    {
      std::lock_guard<std::mutex> lk(mu);
      cancelled = c->cancel_requested;
      kill_at = c->cancel_at;
    }
    if (cancelled) {
      while (::kill(-pid, 0) == 0 && std::chrono::steady_clock::now() < kill_at)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ::kill(-pid, SIGKILL);
    }
    finish(c, code);
  }

  // --- handlers -----------------------------------------------------------------
  /// Reads the body with the agent's limit (body_reader.hpp); false (response sent, the
  /// connection closed after it) when it was refused.
  bool read_body(const httplib::ContentReader& reader, httplib::Response& res, std::string& body) {
    BodyRead r = read_body_limited(reader, opts.max_body_bytes, std::chrono::seconds(opts.body_deadline_s), body);
    if (r.status == 0) return true;
    if (res.status == 413) {  // the library refused a Content-Length above the limit before reading
      r.status = 413;
      r.message = "request body too large (Content-Length above the limit of " + std::to_string(opts.max_body_bytes) +
                  " bytes)";
    }
    res.set_header("Connection", "close");  // the rest of an unread body must not be parsed as a request
    send_error(res, r.status, r.message, "");
    return false;
  }

  void submit(const std::string& body, httplib::Response& res) {
    std::string id, pinned = "any", swapfile = opts.swapfile;
    unsigned vcpus = opts.vcpus;
    std::uint64_t memory_mib = opts.memory_mib;
#ifdef HK_AGENT_HAVE_CASE_SPEC
    try {
      hcase::CaseSpec s = hcase::parse_spec(body, "request body");
      id = s.case_id;
      pinned = s.pinned_commit;
      swapfile = s.backend.swapfile_path;
      vcpus = static_cast<unsigned>(s.vm_vcpus);
      memory_mib = static_cast<std::uint64_t>(s.vm_memory_mib);
    } catch (const hcase::SpecError& e) {
      return send_error(res, 400, e.what(), e.field());
    }
#else
    json j;
    try {
      j = json::parse(body);
    } catch (const json::exception& e) {
      return send_error(res, 400, std::string("request body is not JSON: ") + e.what(), "");
    }
    if (!j.is_object()) return send_error(res, 400, "case spec must be a JSON object", "");
    if (!j.contains("case_id") || !j["case_id"].is_string())
      return send_error(res, 400, "case_id: required string", "case_id");
    id = j["case_id"].get<std::string>();
#endif
    if (!safe_case_id(id))
      return send_error(res, 400, "case_id must match [A-Za-z0-9._-]{1,128} and not be . or ..",
                        "case_id");
    if (json u = unclean(); !u.is_null())
      return send_error(res, 412, unclean_message(u), "", {{"reasons", {"unclean_restoration: " + unclean_message(u)}}});
    std::shared_ptr<CaseRec> c;
    {
      std::lock_guard<std::mutex> lk(mu);
      if (!busy_id.empty())
        return send_error(res, 409, "busy: case " + busy_id + " is running", "",
                          {{"running_case_id", busy_id}});
      if (lookup(id) || fs::exists(case_dir(id)))
        return send_error(res, 409, "case id " + id + " already used on this agent", "case_id");
      c = std::make_shared<CaseRec>();
      c->id = id;
      c->dir = case_dir(id);
      busy_id = id;
      cases[id] = c;
    }
    json report;
    try {
      report = qualify(pinned, swapfile, vcpus, memory_mib);
    } catch (const std::exception& e) {
      report = json{{"passed", false}, {"reasons", {std::string("qualification failed: ") + e.what()}}};
    }
    {
      std::lock_guard<std::mutex> lk(mu);
      last_report = report;
    }
    if (!report.value("passed", false)) {
      std::lock_guard<std::mutex> lk(mu);
      cases.erase(id);
      busy_id.clear();
      return send_error(res, 412, "host not qualified", "", {{"reasons", reasons_of(report)}});
    }
    try {
      fs::create_directories(c->dir / "out");
      spit(c->dir / "spec.json", body);
      std::vector<std::string> argv = executor;
      argv.insert(argv.end(), {"--spec", (c->dir / "spec.json").string(), "--out", (c->dir / "out").string()});
      if (watcher.joinable()) watcher.join();
      pid_t pid = spawn_child(argv, (c->dir / "executor.log").string());
      {
        std::lock_guard<std::mutex> lk(mu);
        c->pid = pid;
        c->state = "running";
      }
      watcher = std::thread([this, c, pid] { watch(c, pid); });
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lk(mu);
      c->state = "infra_failed";
      c->error = std::string("could not start the executor: ") + e.what();
      busy_id.clear();
      try {
        spit(c->dir / "status.json", status_json(*c).dump(2) + "\n");
      } catch (...) {
      }
      return send_error(res, 500, c->error, "");
    }
    res.status = 202;
    res.set_content(json{{"case_id", id}}.dump(), "application/json");
  }

  // /v1/cases/<rest>: routes status, bundle, cancel; every id is checked first.
  void case_route(const httplib::Request& req, httplib::Response& res) {
    const std::string prefix = "/v1/cases/";
    std::string rest = req.path.substr(prefix.size());
    std::string action;
    for (const char* a : {"/bundle", "/cancel"}) {
      std::string suf = a;
      if (rest.size() > suf.size() && rest.compare(rest.size() - suf.size(), suf.size(), suf) == 0) {
        action = suf.substr(1);
        rest = rest.substr(0, rest.size() - suf.size());
        break;
      }
    }
    if (!safe_case_id(rest))
      return send_error(res, 400, "bad case id: must match [A-Za-z0-9._-]{1,128} and not be . or ..",
                        "case_id");
    bool is_post = req.method == "POST";
    if ((action == "cancel") != is_post)
      return send_error(res, 405, "method not allowed for this path", "");
    std::unique_lock<std::mutex> lk(mu);
    auto c = lookup(rest);
    if (!c) return send_error(res, 404, "unknown case id " + rest, "case_id");
    if (action.empty()) {
      res.set_content(status_json(*c).dump(), "application/json");
      return;
    }
    if (action == "cancel") {
      if (c->state == "running" || c->state == "queued") {
        c->cancel_requested = true;
        c->cancel_at = std::chrono::steady_clock::now() + std::chrono::seconds(opts.cancel_grace_s);
        if (c->pid > 0) signal_child(c->pid, SIGTERM);
      }
      res.status = 202;
      res.set_content(status_json(*c).dump(), "application/json");
      return;
    }
    // bundle
    if (c->state == "queued" || c->state == "running")
      return send_error(res, 409, "case " + rest + " has not finished (state " + c->state + ")", "");
    fs::path b = bundle_path(*c);
    if (!fs::exists(b))
      return send_error(res, 404, "case " + rest + " has no bundle (state " + c->state + ")", "");
    lk.unlock();
    std::string data = slurp(b);
    res.set_content(std::move(data), "application/vnd.sqlite3");
  }

  void get_qualification(httplib::Response& res) {
    {
      std::lock_guard<std::mutex> lk(mu);
      if (!busy_id.empty()) {
        // Qualification probes memory.reclaim: never run it under a case.
        if (last_report.is_null())
          return send_error(res, 409, "busy: case " + busy_id + " is running; no earlier report", "");
        json j = last_report;
        j["stale_while_busy"] = true;
        res.set_content(j.dump(), "application/json");
        return;
      }
    }
    json r = qualify("any", opts.swapfile, opts.vcpus, opts.memory_mib);
    {
      std::lock_guard<std::mutex> lk(mu);
      last_report = r;
    }
    res.set_content(r.dump(), "application/json");
  }
};

Server::Server(AgentOptions opts) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.opts = std::move(opts);
  if (m.opts.token_file.empty()) throw std::runtime_error("--token-file is required");
  m.token = load_token(m.opts.token_file);
  if (m.opts.state_dir.empty()) throw std::runtime_error("--state-dir is required");
  if (m.opts.max_body_bytes == 0) throw std::runtime_error("--max-body-bytes must be > 0");
  std::error_code ec;
  fs::create_directories(fs::path(m.opts.state_dir) / "cases", ec);
  if (ec) throw std::runtime_error("--state-dir " + m.opts.state_dir + ": " + ec.message());
  m.opts.state_dir = fs::absolute(m.opts.state_dir).string();
  m.server = make_http_server(m.opts);
  // A client that closes a TLS connection early must not kill the agent: OpenSSL writes
  // with write(2), which raises SIGPIPE (plain sockets use MSG_NOSIGNAL).
  std::signal(SIGPIPE, SIG_IGN);
  if (m.opts.executor.empty()) {
    m.executor = {fs::read_symlink("/proc/self/exe").string(), "case", "run"};
  } else {
    m.executor = split_command(m.opts.executor);
    if (m.executor.empty()) throw std::runtime_error("--executor is empty");
  }
#ifndef HK_AGENT_HAVE_QUALIFY
  if (m.opts.qualify_cmd.empty())
    std::fprintf(stderr, "agent: WARNING: built without hk_qualify and no --qualify-cmd: "
                         "every submission will get 412\n");
#endif
  if (m.opts.oom_protect) {
    std::ofstream adj("/proc/self/oom_score_adj");
    adj << "-1000\n";
    adj.flush();
    if (!adj)
      std::fprintf(stderr, "agent: WARNING: cannot set oom_score_adj -1000 (needs CAP_SYS_RESOURCE)\n");
  }

  auto& http = m.http_ref();
  http.set_payload_max_length(m.opts.max_body_bytes);
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // Only POST takes a body; the library would read any other method's body whole.
    if (req.method != "POST" && (req.has_header("Transfer-Encoding") ||
                                 req.get_header_value<std::uint64_t>("Content-Length") > 0)) {
      res.set_header("Connection", "close");
      send_error(res, 413, "request body not accepted on " + req.method, "");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method == "GET" && req.path == "/v1/health") return httplib::Server::HandlerResponse::Unhandled;
    if (!bearer_ok(req.get_header_value("Authorization"), impl_->token)) {
      res.set_header("WWW-Authenticate", "Bearer");
      send_error(res, 401, "missing or wrong bearer token", "");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string msg = res.status == 413 ? "request body too large"
                      : res.status == 404 ? "no such path"
                                          : "HTTP error " + std::to_string(res.status);
    send_error(res, res.status, msg, "");
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string msg = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      msg += std::string(": ") + e.what();
    } catch (...) {
    }
    send_error(res, 500, msg, "");
  });
  http.Get("/v1/health", [this](const httplib::Request&, httplib::Response& res) {
    bool busy;
    {
      std::lock_guard<std::mutex> lk(impl_->mu);
      busy = !impl_->busy_id.empty();
    }
    json j{{"status", "ok"},
           {"version", harness::build::kVersion},
           {"source_commit", harness::build::kSourceCommit},
           {"busy", busy},
           {"boot_id", Impl::boot_id()},
           {"unclean", impl_->unclean()}};
    res.set_content(j.dump(), "application/json");
  });
  http.Get("/v1/qualification",
           [this](const httplib::Request&, httplib::Response& res) { impl_->get_qualification(res); });
  // POST bodies are read by read_body_limited (the library's own limit only sees Content-Length).
  http.Post("/v1/cases", [this](const httplib::Request&, httplib::Response& res, const httplib::ContentReader& rd) {
    std::string body;
    if (impl_->read_body(rd, res, body)) impl_->submit(body, res);
  });
  http.Post("/v1/reboot", [this](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& rd) {
    std::string body;  // takes no body; any body is still bounded
    if (!has_body_framing(req) || impl_->read_body(rd, res, body)) impl_->reboot(res);
  });
  http.Delete("/v1/unclean", [this](const httplib::Request&, httplib::Response& res) {
    json u = impl_->unclean();
    if (u.is_null()) return send_error(res, 404, "the VM is not marked unclean", "");
    std::error_code ec;
    fs::remove(impl_->unclean_path(), ec);
    if (ec) return send_error(res, 500, "cannot remove " + impl_->unclean_path().string() + ": " + ec.message(), "");
    res.set_content(json{{"cleared", u}}.dump(), "application/json");
  });
  http.Get(R"(/v1/cases/.*)",
           [this](const httplib::Request& req, httplib::Response& res) { impl_->case_route(req, res); });
  http.Post(R"(/v1/cases/.*)",
            [this](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& rd) {
              std::string body;  // cancel takes no body; any body is still bounded
              if (!has_body_framing(req) || impl_->read_body(rd, res, body)) impl_->case_route(req, res);
            });
}

Server::~Server() {
  stop();
  if (impl_->watcher.joinable()) impl_->watcher.join();
  if (impl_->rebooter.joinable()) impl_->rebooter.join();
}

bool is_loopback_address(const std::string& bind) {
  if (bind == "localhost" || bind == "::1" || bind == "[::1]") return true;
  in_addr a{};
  if (::inet_pton(AF_INET, bind.c_str(), &a) == 1) return (ntohl(a.s_addr) >> 24) == 127;
  return false;
}

int Server::bind() {
  Impl& m = *impl_;
  if (m.opts.port == 0) {
    m.bound_port = m.server->bind_to_any_port(m.opts.bind);
  } else {
    m.bound_port = m.server->bind_to_port(m.opts.bind, m.opts.port) ? m.opts.port : -1;
  }
  if (m.bound_port <= 0)
    throw std::runtime_error("agent: cannot bind " + m.opts.bind + ":" + std::to_string(m.opts.port));
  return m.bound_port;
}

void Server::serve() {
  // httplib's stop() is a no-op until listen_after_bind() has marked the server running,
  // so a SIGTERM that arrives between bind() and the accept loop would be lost and the
  // agent would never exit. stop() only sets a flag; this thread applies it once the
  // server runs (or at once if it already does), polling every 20 ms.
  Impl& m = *impl_;
  std::atomic<bool> served{false};
  std::thread applier([&m, &served] {
    while (!served.load()) {
      if (m.stop_requested.load() && m.server->is_running()) {
        m.server->stop();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  if (!m.stop_requested.load()) m.server->listen_after_bind();
  served.store(true);
  applier.join();
}

void Server::stop() { impl_->stop_requested.store(true); }

int Server::port() const { return impl_->bound_port; }

}  // namespace harness::agent
