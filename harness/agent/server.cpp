// The agent HTTP server (see server.hpp and API.md).
#include "harness/agent/server.hpp"

#include "harness/agent/body_reader.hpp"
#include "harness/agent/case_id.hpp"
#include "harness/agent/child.hpp"
#include "harness/agent/durable_file.hpp"
#include "harness/agent/executor_command.hpp"
#include "harness/agent/guarded_server.hpp"
#include "harness/agent/token.hpp"
#include "harness/case/qualification_options.hpp"
#include "harness/case/spec.hpp"
#include "harness/json/limited_parse.hpp"
#include "qualify/qualify.hpp"
#include "results/db.hpp"

#include <harness/build_info.hpp>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace harness::agent {
using nlohmann::json;
namespace {

/// status.json, unclean.json and a qualification command's report: at most this many bytes.
constexpr std::size_t kStateFileMax = 1 << 20;
/// GET /v1/cases/{id}?wait_ms=: the longest wait a request may ask for, ms (API.md).
constexpr int kMaxStatusWaitMs = 60000;
/// GET /v1/cases/{id}/bundle: downloads served at once; beyond, 503 with Retry-After (API.md;
/// ours: the runner downloads one bundle per case, a retry may overlap a stale one).
constexpr std::size_t kMaxBundleDownloads = 2;
/// A bundle is streamed in pieces of this many bytes, read with pread(2) as the client
/// takes them (a download holds one piece, never the whole bundle).
constexpr std::size_t kBundlePiece = 64 << 10;

/// JSON text of `j`; bytes that are not UTF-8 (a path, an error text) become U+FFFD
/// instead of throwing, so an answer can always be written.
std::string dump(const json& j, int indent = -1) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

std::string str_or(const json& j, const char* key, const std::string& dflt) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : dflt;
}

/// The HTTP or HTTPS server for `o`, after the transport checks (server.hpp). `deepen`
/// receives the server's deepen_backlog (called after bind).
std::unique_ptr<httplib::Server> make_http_server(const AgentOptions& o, std::function<void()>& deepen) {
  const bool tls = !o.tls_cert_file.empty() || !o.tls_key_file.empty();
  ConnectionLimits limits = o.limits;
  limits.max_body_bytes = o.max_body_bytes;
  limits.body_deadline_ms = o.body_deadline_s * 1000;
  if (!tls) {
    if (!is_loopback_address(o.bind) && !o.insecure_plain_http)
      throw std::runtime_error("--bind " + o.bind +
                               ": refusing plain HTTP on a non-loopback address (the bearer token would "
                               "cross the network in clear text); give --tls-cert and --tls-key, or "
                               "--insecure-plain-http for a network you trust");
    auto s = std::make_unique<GuardedServer>(limits);
    deepen = [p = s.get()] { p->deepen_backlog(); };
    return s;
  }
  if (o.tls_cert_file.empty() || o.tls_key_file.empty())
    throw std::runtime_error("--tls-cert and --tls-key go together (got only " +
                             std::string(o.tls_cert_file.empty() ? "--tls-key" : "--tls-cert") + ")");
  for (const auto& [flag, file] : {std::pair{"--tls-cert", o.tls_cert_file}, std::pair{"--tls-key", o.tls_key_file}})
    if (::access(file.c_str(), R_OK) != 0)
      throw std::runtime_error(std::string(flag) + " " + file + ": cannot read");
  auto s = std::make_unique<GuardedSslServer>(o.tls_cert_file.c_str(), o.tls_key_file.c_str(), limits);
  if (!s->is_valid())
    throw std::runtime_error("--tls-cert " + o.tls_cert_file + " / --tls-key " + o.tls_key_file +
                             ": not a usable PEM certificate and matching private key");
  deepen = [p = s.get()] { p->deepen_backlog(); };
  return s;
}

/// Every error answer of the handlers: `msg` and `field` may quote request text (a spec's
/// value or key, a path), so every byte outside printable ASCII is written as \xNN
/// (harness::json::printable): an error never carries raw request bytes such as ESC or BEL
/// to the client's terminal or log (API.md).
void send_error(httplib::Response& res, int status, const std::string& msg, const std::string& field = "",
                const json& extra = json::object()) {
  json j = extra;
  j["error"] = harness::json::printable(msg, std::string_view::npos);
  j["field"] = field.empty() ? json(nullptr) : json(harness::json::printable(field, std::string_view::npos));
  res.status = status;
  res.set_content(dump(j), "application/json");
}

/// A declared Content-Length above `max_body`: answers 413 (the connection closes after it,
/// nothing of the body is read) and returns true; else false.
bool refuse_declared_length(const httplib::Request& req, httplib::Response& res, std::size_t max_body) {
  if (req.get_header_value<std::uint64_t>("Content-Length") <= max_body) return false;
  close_after_response();
  res.set_header("Connection", "close");
  send_error(res, 413, "request body too large (Content-Length above the limit of " + std::to_string(max_body) +
                           " bytes)", "");
  return true;
}

/// Runs `argv` and returns its exit code and stdout, at most kStateFileMax + 1 bytes of it
/// (for --qualify-cmd).
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
  while ((n = read(p[0], buf, sizeof buf)) > 0)
    if (out.size() <= kStateFileMax) out.append(buf, static_cast<std::size_t>(n));
  close(p[0]);
  return {wait_child(pid), out};
}

/// True when the request announces a body (Content-Length or Transfer-Encoding). A POST
/// with neither has no body (RFC 9112 section 6.3); httplib would instead read until the
/// client closes, so a plain `curl -X POST` to a body-less endpoint would wait for its read
/// timeout and fail.
bool has_body_framing(const httplib::Request& req) {
  return req.has_header("Content-Length") || req.has_header("Transfer-Encoding");
}

/// The paths the agent serves, by method (anything else is 404 before a body is read).
bool known_route(const httplib::Request& req) {
  const std::string& p = req.path;
  const bool under_cases = p.rfind("/v1/cases/", 0) == 0;
  if (req.method == "GET") return p == "/v1/health" || p == "/v1/qualification" || under_cases;
  if (req.method == "POST") return p == "/v1/cases" || p == "/v1/reboot" || under_cases;
  if (req.method == "DELETE") return p == "/v1/unclean";
  return false;
}

bool is_final(const std::string& state) {
  return state == "completed" || state == "lost" || state == "infra_failed" || state == "cancelled";
}

}  // namespace

/// A case known to the agent (in memory; its final state also in cases/<id>/status.json).
struct CaseRec {
  std::string id;
  /// queued | qualifying | running | finishing (executor exited, verdict being read) |
  /// completed | lost | infra_failed | cancelled
  std::string state = "queued";
  std::string error;  // "" = null
  fs::path dir;
  ChildHandle child;  // pid > 0 while the agent may signal the executor (child.hpp)
  int exit_code = -1;
  bool cancel_requested = false;
  Clock::time_point kill_at{};  // a cancel's SIGKILL deadline
  int grace_s = 60;             // SIGTERM -> SIGKILL of a cancel, s
  json restoration = nullptr;   // {"clean": bool|null, "problems": [...]} once the bundle is read
};

/// What a finished executor left: the bundle's case row and restoration verdict.
struct BundleOutcome {
  std::string state = "infra_failed";  // completed | lost | infra_failed (the bundle's cases.status)
  std::string error;
  json restoration = nullptr;
  bool unclean = false;  // the VM must not run another case until the operator clears it
  json problems = json::array();
};

struct Server::Impl {
  AgentOptions opts;
  std::string token;
  std::unique_ptr<httplib::Server> server;  // GuardedServer or GuardedSslServer
  std::function<void()> deepen_backlog;
  std::vector<std::string> allowed_dirs;  // data_dir + allow_paths
  // The registry: guarded by `mu`; nothing under it touches a file, SQLite or a pipe.
  std::mutex mu;
  std::map<std::string, std::shared_ptr<CaseRec>> cases;
  std::string busy_id;         // "" = idle; a case id, "(qualification)" or "(reboot)"
  std::size_t downloads = 0;   // bundle downloads being served (BundleDownload)
  json last_report;            // last qualification report (served while busy)
  json mark_not_written;       // an unclean mark that could not be written (null = none)
  std::thread watcher;
  int bound_port = -1;
  std::vector<std::string> executor;
  std::atomic<bool> stop_requested{false};  // set by stop(); async-signal-safe
  // Written by stop() (write(2) is async-signal-safe) and by serve() when the accept loop
  // returns, so that serve()'s stop applier sleeps in poll(2) instead of waking at 50 Hz for
  // the agent's whole life (in a TCG guest those wakes were CPU charged to the case).
  int wake_fd = ::eventfd(0, EFD_CLOEXEC);
  ~Impl() {
    if (wake_fd >= 0) ::close(wake_fd);
    if (watcher_wake_fd >= 0) ::close(watcher_wake_fd);
  }
  /// Adds 1 to the eventfd `fd` (nothing when it is -1); write(2) only: async-signal-safe.
  static void post(int fd) {
    const std::uint64_t one = 1;
    if (fd >= 0) (void)!::write(fd, &one, sizeof one);
  }
  void wake() const { post(wake_fd); }
  // A case's status changed (state, phase, cancel) or the server stops: `generation` is
  // bumped and `changed` notified, under `mu`. A waiting status request (GET
  // /v1/cases/{id}?wait_ms=...) sleeps on it instead of the runner asking every second.
  std::condition_variable changed;
  std::uint64_t generation = 0;
  void bump() {  // with `mu` held
    ++generation;
    changed.notify_all();
  }
  // Written by a cancel, so that the watcher, which sleeps until the executor exits or its
  // phase file changes, looks at the cancel's SIGKILL deadline.
  int watcher_wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  std::thread rebooter;                     // POST /v1/reboot: the delayed reboot

  /// /proc/sys/kernel/random/boot_id without the newline; "" when unreadable.
  static std::string boot_id() {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(in, id);
    return id;
  }

  std::string busy_message() const {
    if (busy_id == "(qualification)") return "busy: a qualification is running";
    if (busy_id == "(reboot)") return "busy: the VM is about to reboot";
    return "busy: case " + busy_id + " is running";
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
      if (!busy_id.empty()) return send_error(res, 409, busy_message(), "", {{"running_case_id", busy_id}});
      busy_id = "(reboot)";
    }
    const std::string before = boot_id();
    res.status = 202;
    res.set_content(dump(json{{"boot_id", before}, {"reboot_in_ms", 500}}), "application/json");
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

  // --- unclean restoration ------------------------------------------------------------
  // A case whose restoration was unclean (or unknown) leaves <state>/unclean.json; until it
  // is cleared (DELETE /v1/unclean, or removing the file) every submission gets 412: the
  // VM's state is nobody's next case's problem. A mark that could not be written is kept
  // in memory (mark_not_written) and refuses cases the same way.
  fs::path unclean_path() const { return fs::path(opts.state_dir) / "unclean.json"; }

  /// The mark (or the one that could not be written), or null. Reads the file without the lock.
  json unclean() {
    {
      std::lock_guard<std::mutex> lk(mu);
      if (!mark_not_written.is_null()) return mark_not_written;
    }
    try {
      const auto text = read_small_file(unclean_path(), kStateFileMax);
      if (!text) return nullptr;
      json j = harness::json::parse_or_discarded(*text);
      if (j.is_object()) return j;
      return json{{"case_id", nullptr}, {"problems", {"unclean.json is not a JSON object"}}};
    } catch (const std::exception& e) {
      return json{{"case_id", nullptr}, {"problems", {std::string("unclean.json unreadable: ") + e.what()}}};
    }
  }

  static std::string unclean_message(const json& u) {
    std::string problems;
    if (u.contains("problems") && u["problems"].is_array())
      for (const auto& p : u["problems"]) problems += (problems.empty() ? "" : "; ") + (p.is_string() ? p.get<std::string>() : dump(p));
    std::string msg = "VM unusable: the restoration of case " + str_or(u, "case_id", "?") + " was unclean (" + problems +
                      "); fix the VM (or reboot it), then clear the mark with DELETE /v1/unclean";
    if (u.contains("not_written")) msg += " (the mark could not be written: " + str_or(u, "not_written", "?") + ")";
    return msg;
  }

  /// Reads the case row and restoration verdict of a finished executor's bundle. No lock
  /// held (SQLite may wait up to its busy timeout).
  BundleOutcome read_bundle(const std::string& id, const fs::path& bundle, int exit_code) const {
    BundleOutcome o;
    std::error_code ec;
    if (!fs::exists(bundle, ec)) {
      o.error = "executor exited with code " + std::to_string(exit_code) + " without writing a bundle (see executor.log)";
      o.unclean = true;
      o.problems.push_back("no restoration verdict: the executor exited with code " + std::to_string(exit_code) +
                           " without writing a bundle, so the VM's state is unknown");
      o.restoration = {{"clean", nullptr}, {"problems", o.problems}};
      return o;
    }
    try {
      results::Db db(bundle.string(), results::Db::Mode::ReadOnly);
      results::Stmt st(db, "SELECT status, error FROM cases WHERE case_id = ?");
      st.bind(1, id);
      if (st.step()) {
        const std::string status = st.text(0);
        o.state = status == "completed" || status == "lost" ? status : "infra_failed";
        o.error = st.opt_text(1).value_or("");
      } else {
        o.error = "bundle " + bundle.string() + " has no row for this case";
      }
      results::Stmt r(db, "SELECT clean, detail_json FROM restoration WHERE case_id = ?");
      r.bind(1, id);
      if (!r.step()) {
        // The executor ended before it set anything up (restoration runs once anything is).
        o.restoration = {{"clean", nullptr}, {"problems", json::array()}, {"ran", false}};
        return o;
      }
      const bool clean = !r.is_null(0) && r.int64(0) != 0;
      const json detail = r.is_null(1) ? json() : harness::json::parse_or_discarded(r.text(1));
      if (detail.is_object() && detail.contains("verdict") && detail["verdict"].is_object() &&
          detail["verdict"].contains("problems") && detail["verdict"]["problems"].is_array())
        o.problems = detail["verdict"]["problems"];
      if (!clean && o.problems.empty()) o.problems.push_back("restoration.clean = 0 (no problems listed)");
      o.unclean = !clean;
      o.restoration = {{"clean", clean}, {"problems", o.problems}, {"ran", true}};
    } catch (const std::exception& e) {
      o.state = "infra_failed";
      o.error = std::string("bundle unreadable: ") + e.what();
      o.unclean = true;
      o.problems = json::array({"no restoration verdict: the bundle is unreadable (" + std::string(e.what()) +
                                "), so the VM's state is unknown"});
      o.restoration = {{"clean", nullptr}, {"problems", o.problems}};
    }
    return o;
  }

  /// Marks the VM unusable (unclean.json, durably) before the case's result is reported;
  /// when the mark cannot be written, the agent keeps it in memory and says why.
  void write_mark(const std::string& id, const json& problems) {
    json mark{{"case_id", id}, {"problems", problems}, {"marked_unix_s", static_cast<std::int64_t>(::time(nullptr))}};
    try {
      write_file_durably(unclean_path(), dump(mark, 2) + "\n");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "agent: cannot write the unclean mark of case %s: %s; refusing cases until DELETE /v1/unclean\n",
                   id.c_str(), e.what());
      mark["not_written"] = e.what();
      std::lock_guard<std::mutex> lk(mu);
      mark_not_written = mark;
    }
  }

  // --- qualification --------------------------------------------------------
  /// The qualification report: the case's (case_qualification_options, the executor's
  /// own) when `spec` is given, else the agent's flags (GET /v1/qualification).
  json qualify(const harness::case_::CaseSpec* spec, const fs::path& out_dir) {
    if (!opts.qualify_cmd.empty()) {
      auto [rc, out] = capture(split_command(opts.qualify_cmd));
      try {
        json j = harness::json::parse(out, "qualification command output");
        if (!j.is_object() || !j.contains("passed")) throw std::runtime_error("no 'passed' field");
        return j;
      } catch (const std::exception& e) {
        return json{{"passed", false},
                    {"checks", json::array()},
                    {"reasons", {"qualification command '" + opts.qualify_cmd + "' exited " + std::to_string(rc) +
                                 " without a JSON report: " + e.what()}}};
      }
    }
    qualify::Options q;
    if (spec) {
      q = harness::case_::case_qualification_options(*spec, "/", out_dir.string());
    } else {
      q.swapfile_path = opts.swapfile;
      q.vcpus = opts.vcpus;
      q.memory_mib = opts.memory_mib;
      q.disk_path = (fs::path(opts.state_dir) / "cases").string();
    }
    try {
      return qualify::run(q).to_json();
    } catch (const std::exception& e) {
      return json{{"passed", false}, {"checks", json::array()}, {"reasons", {std::string("qualification failed: ") + e.what()}}};
    }
  }

  static json reasons_of(const json& report) {
    if (report.contains("reasons") && report["reasons"].is_array() && !report["reasons"].empty())
      return report["reasons"];
    json r = json::array();
    if (report.contains("checks") && report["checks"].is_array())
      for (const auto& c : report["checks"])
        if (c.is_object() && c.contains("passed") && c["passed"] == false && !(c.contains("required") && c["required"] == false))
          r.push_back(str_or(c, "name", "?") + ": " + str_or(c, "found", ""));
    if (r.empty()) r.push_back("qualification report says passed=false");
    return r;
  }

  // --- case lifecycle ---------------------------------------------------------
  /// The phase of a case (a copy, read without the lock): running -> <out>/phase.
  static std::string phase_of(const CaseRec& c) {
    if (c.state == "queued" || c.state == "qualifying") return "setup";
    if (c.state != "running") return "done";
    std::string p;
    try {
      p = read_small_file(c.dir / "out" / "phase", 64).value_or("");
    } catch (const std::exception&) {
      p = "";  // unreadable: reported as setup (the phase is for display, never judged)
    }
    while (!p.empty() && (p.back() == '\n' || p.back() == ' ')) p.pop_back();
    static const char* known[] = {"setup", "warmup", "pressure", "recovery", "restoration", "done"};
    for (const char* k : known)
      if (p == k) return p;
    return "setup";
  }

  static json status_json(const CaseRec& c, const std::string& phase) {
    return json{{"case_id", c.id},
                {"state", c.state},
                {"phase", phase},
                {"error", c.error.empty() ? json(nullptr) : json(c.error)},
                {"exit_code", c.exit_code < 0 ? json(nullptr) : json(c.exit_code)},
                {"cancel_requested", c.cancel_requested},
                {"restoration", c.restoration}};
  }

  json status_of(const std::shared_ptr<CaseRec>& c) {
    CaseRec copy;
    {
      std::lock_guard<std::mutex> lk(mu);
      copy = *c;
    }
    return status_json(copy, phase_of(copy));
  }

  /// GET /v1/cases/{id}?wait_ms=W&state=S&phase=P: the status once its state or phase
  /// differs from S/P, the case is final, the agent stops, or W ms have passed, whichever
  /// comes first (API.md "Waiting for a change"). The wait sleeps on `changed`: no timer.
  json status_when_changed(const std::shared_ptr<CaseRec>& c, std::chrono::milliseconds wait,
                           const std::string& seen_state, const std::string& seen_phase) {
    const auto until = Clock::now() + wait;
    for (;;) {
      CaseRec copy;
      std::uint64_t gen;
      {
        std::lock_guard<std::mutex> lk(mu);
        copy = *c;
        gen = generation;
      }
      const std::string phase = phase_of(copy);
      if (is_final(copy.state) || copy.state != seen_state || phase != seen_phase) return status_json(copy, phase);
      std::unique_lock<std::mutex> lk(mu);
      const bool woken =
          changed.wait_until(lk, until, [&] { return generation != gen || stop_requested.load(); });
      if (!woken || stop_requested.load()) {
        lk.unlock();
        return status_of(c);
      }
    }
  }

  fs::path bundle_path(const CaseRec& c) const { return c.dir / "out" / (c.id + ".db"); }

  /// A case of this run, or of an earlier agent run (its status.json, read without the
  /// lock), or nullptr.
  std::shared_ptr<CaseRec> find_case(const std::string& id) {
    {
      std::lock_guard<std::mutex> lk(mu);
      auto it = cases.find(id);
      if (it != cases.end()) return it->second;
    }
    const fs::path d = case_dir(id);
    std::optional<std::string> text;
    try {
      text = read_small_file(d / "status.json", kStateFileMax);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "agent: case %s: %s\n", id.c_str(), e.what());
      return nullptr;
    }
    if (!text) return nullptr;
    const json j = harness::json::parse_or_discarded(*text);
    if (!j.is_object()) {
      std::fprintf(stderr, "agent: case %s: status.json is not a JSON object\n", id.c_str());
      return nullptr;
    }
    auto c = std::make_shared<CaseRec>();
    c->id = id;
    c->dir = d;
    c->state = str_or(j, "state", "infra_failed");
    if (!is_final(c->state)) c->state = "infra_failed";  // an earlier run's unfinished case
    c->error = str_or(j, "error", "");
    c->exit_code = j.contains("exit_code") && j["exit_code"].is_number_integer() ? j["exit_code"].get<int>() : -1;
    c->cancel_requested = j.contains("cancel_requested") && j["cancel_requested"] == true;
    if (j.contains("restoration")) c->restoration = j["restoration"];
    std::lock_guard<std::mutex> lk(mu);
    return cases.emplace(id, c).first->second;
  }

  /// Publishes the final state of `c` (writes status.json first, without the lock). A
  /// cancel that arrives while status.json is written makes the state "cancelled" and
  /// status.json is written again.
  void publish_final(const std::shared_ptr<CaseRec>& c, const std::string& state, const std::string& error,
                     int exit_code, const json& restoration) {
    for (;;) {
      CaseRec fin;
      {
        std::lock_guard<std::mutex> lk(mu);
        fin = *c;
      }
      fin.child = ChildHandle{};
      fin.exit_code = exit_code;
      fin.restoration = restoration;
      fin.state = fin.cancel_requested ? "cancelled" : state;
      fin.error = fin.cancel_requested ? "cancelled by request" + (error.empty() ? std::string() : " (" + error + ")") : error;
      try {
        write_file_durably(c->dir / "status.json", dump(status_json(fin, "done"), 2) + "\n");
      } catch (const std::exception& e) {
        std::fprintf(stderr, "agent: case %s: cannot write status.json: %s\n", c->id.c_str(), e.what());
      }
      std::lock_guard<std::mutex> lk(mu);
      if (c->cancel_requested != fin.cancel_requested) continue;  // cancelled meanwhile: write again
      c->state = fin.state;
      c->error = fin.error;
      c->exit_code = fin.exit_code;
      c->restoration = fin.restoration;
      c->child = ChildHandle{};
      if (busy_id == c->id) busy_id.clear();
      bump();
      return;
    }
  }

  /// After the executor exited (reaped): its verdict, the unclean mark, the final state.
  void finish(const std::shared_ptr<CaseRec>& c, int code) {
    const BundleOutcome o = read_bundle(c->id, bundle_path(*c), code);
    if (o.unclean) write_mark(c->id, o.problems);  // durable before the result is reported
    publish_final(c, o.state, o.error, code, o.restoration);
  }

  /// An inotify descriptor on the case's output directory, for the executor's phase file
  /// (renamed into place: IN_MOVED_TO), or -1 when inotify is unavailable (the phase is then
  /// still read on every status request; a waiting request learns of it only at its end).
  static int watch_phase_file(const fs::path& out_dir) {
    const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return -1;
    if (::inotify_add_watch(fd, out_dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }

  /// True when the inotify events waiting on `fd` (drained) name the phase file.
  static bool phase_file_changed(int fd) {
    bool phase = false;
    alignas(inotify_event) char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0)
      for (ssize_t off = 0; off + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buf + off);
        if (e->len > 0 && std::strcmp(e->name, "phase") == 0) phase = true;
        off += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      }
    return phase;
  }

  void watch(std::shared_ptr<CaseRec> c, ChildHandle child, int phase_fd) {
    // Sleeps until the executor exits (its pidfd), its phase file changes (inotify: waiting
    // status requests are told), or a cancel comes (watcher_wake_fd); with a cancel, also
    // until its SIGKILL deadline. No timer wakes while the case runs: in the guest every wake
    // is CPU charged to the case.
    bool killed = false;
    std::vector<pollfd> also;
    if (phase_fd >= 0) also.push_back({phase_fd, POLLIN, 0});
    if (watcher_wake_fd >= 0) also.push_back({watcher_wake_fd, POLLIN, 0});
    for (;;) {
      std::chrono::milliseconds wait{-1};
      {
        std::lock_guard<std::mutex> lk(mu);
        if (c->cancel_requested && !killed) {
          const auto now = Clock::now();
          if (now >= c->kill_at) {
            signal_child(child, SIGKILL);  // the executor ignored SIGTERM for the whole grace
            killed = true;
          } else {
            wait = std::chrono::ceil<std::chrono::milliseconds>(c->kill_at - now);
          }
        }
      }
      if (wait_exit_or_readable(child, wait, also)) break;
      bool phase = false;
      for (const auto& p : also)
        if (p.revents & POLLIN) {
          if (p.fd == phase_fd) {
            phase = phase_file_changed(phase_fd);
          } else {
            std::uint64_t v;
            (void)!::read(p.fd, &v, sizeof v);
          }
        }
      if (phase) {
        std::lock_guard<std::mutex> lk(mu);
        bump();
      }
    }
    if (phase_fd >= 0) ::close(phase_fd);
    bool cancelled = false;
    {
      std::lock_guard<std::mutex> lk(mu);
      cancelled = c->cancel_requested;
      c->child = ChildHandle{};  // no signal from here on: the pid is about to be released
      c->state = "finishing";
      bump();
    }
    // The leader has exited but is not reaped yet, so its process-group id is still its
    // own: a cancelled case's stragglers (group members that ignored SIGTERM) are killed
    // now. The executor itself has restored the host before exiting.
    if (cancelled) ::kill(-child.pid, SIGKILL);
    const int code = reap_child(child);
    finish(c, code);
  }

  // --- handlers -----------------------------------------------------------------
  /// Reads the body with the agent's limit (body_reader.hpp); false (response sent, the
  /// connection closed after it) when it was refused.
  bool read_body(const httplib::ContentReader& reader, httplib::Response& res, std::string& body) {
    BodyRead r = read_body_limited(reader, opts.max_body_bytes, std::chrono::seconds(opts.body_deadline_s), body);
    if (r.status == 0) {
      mark_body_consumed();
      return true;
    }
    if (r.status == 400 && body_deadline_passed()) {
      r.status = 408;
      r.message = "request body not received within " + std::to_string(opts.body_deadline_s) + " s";
    } else if (r.status == 400 && body_over_raw_limit()) {
      r.message = "request body takes more than " + std::to_string(raw_body_limit(opts.max_body_bytes)) +
                  " bytes on the wire, chunk framing included (limit: 2 x the body limit + 64 KiB)";
    }
    close_after_response();  // the rest of an unread body must not be parsed as a request
    res.set_header("Connection", "close");
    send_error(res, r.status, r.message, "");
    return false;
  }

  /// A case that ends before its executor started (cancelled while qualifying, or the
  /// executor could not be started).
  void end_unstarted(const std::shared_ptr<CaseRec>& c, const std::string& state, const std::string& error) {
    {
      std::lock_guard<std::mutex> lk(mu);
      if (state == "cancelled") c->cancel_requested = true;
    }
    publish_final(c, state, error, -1, nullptr);
  }

  void submit(const std::string& body, httplib::Response& res) {
    harness::case_::CaseSpec s;
    try {
      s = harness::case_::parse_spec(body, "request body");
    } catch (const harness::case_::SpecError& e) {
      return send_error(res, 400, e.what(), e.field());
    }
    for (const auto& [field, path] : {std::pair<std::string, std::string>{"backend.swapfile_path", s.backend.swapfile_path},
                                      {"canaries.sqlite_db_path", s.canaries.sqlite_db_path}})
      if (auto why = harness::case_::path_outside_reason(path, allowed_dirs))
        return send_error(res, 400, "request body: field '" + field + "': " + path + " " + *why, field);
    const std::string id = s.case_id;
    if (!safe_case_id(id))
      return send_error(res, 400, "case_id must match [A-Za-z0-9._-]{1,128} and not be . or ..", "case_id");
    std::shared_ptr<CaseRec> c;
    {
      std::lock_guard<std::mutex> lk(mu);
      if (!mark_not_written.is_null())
        return send_error(res, 412, unclean_message(mark_not_written), "",
                          {{"reasons", {"unclean_restoration: " + unclean_message(mark_not_written)}}});
      if (!busy_id.empty()) return send_error(res, 409, busy_message(), "", {{"running_case_id", busy_id}});
      if (cases.count(id)) return send_error(res, 409, "case id " + id + " already used on this agent", "case_id");
      c = std::make_shared<CaseRec>();
      c->id = id;
      c->dir = case_dir(id);
      c->grace_s = opts.cancel_grace_s > 0 ? opts.cancel_grace_s : s.restoration_timeout_s + 60;
      busy_id = id;  // from here on no other submission, qualification or reboot starts
      cases[id] = c;
    }
    auto release = [&] {
      std::lock_guard<std::mutex> lk(mu);
      cases.erase(id);
      if (busy_id == id) busy_id.clear();
      bump();
    };
    // Disk checks without the lock (the busy slot keeps everything else out meanwhile).
    if (json u = unclean(); !u.is_null()) {
      release();
      return send_error(res, 412, unclean_message(u), "", {{"reasons", {"unclean_restoration: " + unclean_message(u)}}});
    }
    std::error_code ec;
    if (fs::exists(c->dir, ec)) {
      release();
      return send_error(res, 409, "case id " + id + " already used on this agent", "case_id");
    }
    {
      std::lock_guard<std::mutex> lk(mu);
      c->state = "qualifying";
      bump();
    }
    json report = qualify(&s, c->dir / "out");
    {
      std::lock_guard<std::mutex> lk(mu);
      last_report = report;
    }
    if (!(report.contains("passed") && report["passed"] == true)) {
      release();
      return send_error(res, 412, "host not qualified", "", {{"reasons", reasons_of(report)}});
    }
    try {
      fs::create_directories(c->dir / "out");
      write_file_durably(c->dir / "spec.json", body);
    } catch (const std::exception& e) {
      end_unstarted(c, "infra_failed", std::string("could not write the case's spec: ") + e.what());
      return send_error(res, 500, std::string("could not write the case's spec: ") + e.what(), "");
    }
    bool cancelled = false;
    {
      std::lock_guard<std::mutex> lk(mu);
      cancelled = c->cancel_requested;
    }
    if (cancelled) {  // cancelled while queued or qualifying: the executor never starts
      end_unstarted(c, "cancelled", "before the executor started");
      res.status = 202;
      res.set_content(dump(json{{"case_id", id}, {"state", "cancelled"}}), "application/json");
      return;
    }
    std::vector<std::string> argv = executor;
    argv.insert(argv.end(), {"--spec", (c->dir / "spec.json").string(), "--out", (c->dir / "out").string()});
    if (watcher.joinable()) watcher.join();  // the previous case's: it has freed the busy slot
    const int phase_fd = watch_phase_file(c->dir / "out");  // before the executor can write it
    ChildHandle h;
    try {
      h = spawn_child(argv, (c->dir / "executor.log").string());
    } catch (const std::exception& e) {
      if (phase_fd >= 0) ::close(phase_fd);
      end_unstarted(c, "infra_failed", std::string("could not start the executor: ") + e.what());
      return send_error(res, 500, std::string("could not start the executor: ") + e.what(), "");
    }
    {
      std::lock_guard<std::mutex> lk(mu);
      c->child = h;
      c->state = "running";
      bump();
      if (c->cancel_requested) {  // cancelled between the check above and the spawn
        c->kill_at = Clock::now() + std::chrono::seconds(c->grace_s);
        signal_child(h, SIGTERM);
      }
    }
    watcher = std::thread([this, c, h, phase_fd] { watch(c, h, phase_fd); });
    res.status = 202;
    res.set_content(dump(json{{"case_id", id}}), "application/json");
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
      return send_error(res, 400, "bad case id: must match [A-Za-z0-9._-]{1,128} and not be . or ..", "case_id");
    const bool is_post = req.method == "POST";
    if ((action == "cancel") != is_post) return send_error(res, 405, "method not allowed for this path", "");
    auto c = find_case(rest);
    if (!c) return send_error(res, 404, "unknown case id " + rest, "case_id");
    if (action.empty()) {
      if (!req.has_param("wait_ms")) {
        res.set_content(dump(status_of(c)), "application/json");
        return;
      }
      const std::string w = req.get_param_value("wait_ms");
      if (w.empty() || w.size() > 5 || w.find_first_not_of("0123456789") != std::string::npos ||
          std::stoi(w) > kMaxStatusWaitMs)
        return send_error(res, 400, "wait_ms must be an integer from 0 to " + std::to_string(kMaxStatusWaitMs) + " (ms)",
                          "wait_ms");
      for (const char* k : {"state", "phase"})
        if (!req.has_param(k))
          return send_error(res, 400, std::string("wait_ms needs state and phase (the status last seen); ") + k + " is missing", k);
      res.set_content(dump(status_when_changed(c, std::chrono::milliseconds(std::stoi(w)), req.get_param_value("state"),
                                               req.get_param_value("phase"))),
                      "application/json");
      return;
    }
    if (action == "cancel") {
      // Honoured in every state before the final one: queued and qualifying (the executor
      // never starts), running (SIGTERM: the executor restores, then exits; SIGKILL only
      // after the grace), finishing (the final state becomes cancelled).
      {
        std::lock_guard<std::mutex> lk(mu);
        if (!is_final(c->state) && !c->cancel_requested) {
          c->cancel_requested = true;
          c->kill_at = Clock::now() + std::chrono::seconds(c->grace_s);
          if (c->child.pid > 0) signal_child(c->child, SIGTERM);
          bump();
          post(watcher_wake_fd);  // the watcher now minds the SIGKILL deadline
        }
      }
      res.status = 202;
      res.set_content(dump(status_of(c)), "application/json");
      return;
    }
    // bundle
    std::string state;
    fs::path b;
    {
      std::lock_guard<std::mutex> lk(mu);
      state = c->state;
      b = bundle_path(*c);
    }
    if (!is_final(state)) return send_error(res, 409, "case " + rest + " has not finished (state " + state + ")", "");
    serve_bundle(rest, state, b, res);
  }

  /// One bundle download being served: its open file and its slot among kMaxBundleDownloads,
  /// both released when the answer (which holds it through its content provider) is gone.
  struct BundleDownload {
    Impl& m;
    int fd = -1;
    explicit BundleDownload(Impl& impl) : m(impl) {}
    ~BundleDownload() {
      if (fd >= 0) ::close(fd);
      std::lock_guard<std::mutex> lk(m.mu);
      --m.downloads;
    }
  };

  /// GET /v1/cases/{id}/bundle of a finished case: the file streamed with a content
  /// provider (kBundlePiece at a time), at most kMaxBundleDownloads at once (beyond: 503,
  /// Retry-After: 1). The file is opened without blocking and must be a regular file.
  void serve_bundle(const std::string& id, const std::string& state, const fs::path& b, httplib::Response& res) {
    {
      std::lock_guard<std::mutex> lk(mu);
      if (downloads >= kMaxBundleDownloads) {
        res.set_header("Retry-After", "1");
        return send_error(res, 503, "too many bundle downloads at once (limit " + std::to_string(kMaxBundleDownloads) +
                                        "); retry later", "");
      }
      ++downloads;
    }
    auto dl = std::make_shared<BundleDownload>(*this);
    dl->fd = ::open(b.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (dl->fd < 0 && errno == ENOENT) return send_error(res, 404, "case " + id + " has no bundle (state " + state + ")", "");
    if (dl->fd < 0) return send_error(res, 500, "cannot open the bundle " + b.string() + ": " + std::strerror(errno), "");
    struct stat st{};
    if (::fstat(dl->fd, &st) != 0 || !S_ISREG(st.st_mode))
      return send_error(res, 500, "the bundle " + b.string() + " is not a regular file", "");
    if (st.st_size == 0) return res.set_content("", "application/vnd.sqlite3");
    res.set_content_provider(static_cast<std::size_t>(st.st_size), "application/vnd.sqlite3",
                             [dl](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                               std::vector<char> piece(std::min(length, kBundlePiece));
                               ssize_t n;
                               do {
                                 n = ::pread(dl->fd, piece.data(), piece.size(), static_cast<off_t>(offset));
                               } while (n < 0 && errno == EINTR);
                               // A read error or a bundle that shrank: the answer ends short of its
                               // Content-Length and the connection is closed.
                               return n > 0 && sink.write(piece.data(), static_cast<std::size_t>(n));
                             });
  }

  void get_qualification(httplib::Response& res) {
    {
      std::lock_guard<std::mutex> lk(mu);
      if (!busy_id.empty()) {
        // Qualification probes memory.reclaim and swapon: never concurrently with a case,
        // a submission's qualification or another qualification.
        if (last_report.is_null()) return send_error(res, 409, busy_message() + "; no earlier report", "");
        json j = last_report;
        j["stale_while_busy"] = true;
        res.set_content(dump(j), "application/json");
        return;
      }
      busy_id = "(qualification)";
    }
    json r = qualify(nullptr, {});
    {
      std::lock_guard<std::mutex> lk(mu);
      last_report = r;
      if (busy_id == "(qualification)") busy_id.clear();
    }
    res.set_content(dump(r), "application/json");
  }

  void health(httplib::Response& res) {
    bool busy;
    {
      std::lock_guard<std::mutex> lk(mu);
      busy = !busy_id.empty();
    }
    const json u = unclean();
    json j{{"status", "ok"},
           {"version", harness::build::kVersion},
           {"source_commit", harness::build::kSourceCommit},
           {"busy", busy},
           {"boot_id", boot_id()},
           {"unclean", u},
           {"accepting_cases", u.is_null()},
           {"refusal", u.is_null() ? json(nullptr) : json(unclean_message(u))}};
    res.set_content(dump(j), "application/json");
  }

  void clear_unclean(httplib::Response& res) {
    const json u = unclean();
    if (u.is_null()) return send_error(res, 404, "the VM is not marked unclean", "");
    std::error_code ec;
    fs::remove(unclean_path(), ec);
    if (ec) return send_error(res, 500, "cannot remove " + unclean_path().string() + ": " + ec.message(), "");
    {
      std::lock_guard<std::mutex> lk(mu);
      mark_not_written = nullptr;
    }
    res.set_content(dump(json{{"cleared", u}}), "application/json");
  }
};

Server::Server(AgentOptions opts) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.opts = std::move(opts);
  if (m.opts.token_file.empty()) throw std::runtime_error("--token-file is required");
  m.token = load_token(m.opts.token_file);
  if (m.opts.state_dir.empty()) throw std::runtime_error("--state-dir is required");
  if (m.opts.max_body_bytes == 0) throw std::runtime_error("--max-body-bytes must be > 0");
  if (m.opts.data_dir.empty() || m.opts.data_dir.front() != '/')
    throw std::runtime_error("--data-dir " + m.opts.data_dir + ": must be an absolute directory");
  m.allowed_dirs = {fs::path(m.opts.data_dir).lexically_normal().string()};
  for (const auto& a : m.opts.allow_paths) {
    if (a.empty() || a.front() != '/') throw std::runtime_error("--allow-path " + a + ": must be an absolute directory");
    m.allowed_dirs.push_back(fs::path(a).lexically_normal().string());
  }
  std::error_code ec;
  fs::create_directories(fs::path(m.opts.state_dir) / "cases", ec);
  if (ec) throw std::runtime_error("--state-dir " + m.opts.state_dir + ": " + ec.message());
  m.opts.state_dir = fs::absolute(m.opts.state_dir).string();
  m.server = make_http_server(m.opts, m.deepen_backlog);
  // A client that closes a TLS connection early must not kill the agent: OpenSSL writes
  // with write(2), which raises SIGPIPE (plain sockets use MSG_NOSIGNAL).
  std::signal(SIGPIPE, SIG_IGN);
  if (m.opts.executor.empty()) {
    const ExecutorCommand chosen = default_executor(fs::read_symlink("/proc/self/exe").string());
    m.executor = chosen.argv;
    std::fprintf(stderr, "agent: %s\n", chosen.why.c_str());
  } else {
    m.executor = split_command(m.opts.executor);
    if (m.executor.empty()) throw std::runtime_error("--executor is empty");
  }
  if (m.opts.oom_protect) {
    std::ofstream adj("/proc/self/oom_score_adj");
    adj << "-1000\n";
    adj.flush();
    if (!adj)
      std::fprintf(stderr, "agent: WARNING: cannot set oom_score_adj -1000 (needs CAP_SYS_RESOURCE)\n");
  }

  auto& http = *m.server;
  const std::size_t max_body = m.opts.max_body_bytes;
  http.set_pre_routing_handler([this, max_body](const httplib::Request& req, httplib::Response& res) {
    const bool body = req.has_header("Transfer-Encoding") || req.get_header_value<std::uint64_t>("Content-Length") > 0;
    // Only POST takes a body; the library would read any other method's body whole.
    if (req.method != "POST" && body) {
      close_after_response();
      res.set_header("Connection", "close");
      send_error(res, 413, "request body not accepted on " + req.method, "");
      return httplib::Server::HandlerResponse::Handled;
    }
    // A declared length above the limit: refused before a byte of it is read.
    if (refuse_declared_length(req, res, max_body)) return httplib::Server::HandlerResponse::Handled;
    if (req.method == "GET" && req.path == "/v1/health") return httplib::Server::HandlerResponse::Unhandled;
    // The whole header value (the guard refuses a NUL already; the library's string
    // accessors would stop at one).
    const auto auth = req.headers.find("Authorization");
    const bool ok = auth != req.headers.end() && auth->second.find('\0') == std::string::npos &&
                    req.headers.count("Authorization") == 1 && bearer_ok(auth->second, impl_->token);
    if (!ok) {
      if (body) close_after_response();
      res.set_header("WWW-Authenticate", "Bearer");
      send_error(res, 401, "missing or wrong bearer token", "");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!known_route(req)) {
      if (body) close_after_response();
      send_error(res, 404, "no such path", "");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Expect: 100-continue (curl sends it for bodies above 1 MiB): a declared length above the
  // limit gets its 413 instead of the 100 Continue, and the connection closes after it.
  // httplib writes the answer from `res` (its status too: left at -1 it wrote "HTTP/1.1 -1").
  http.set_expect_100_continue_handler([max_body](const httplib::Request& req, httplib::Response& res) {
    if (!refuse_declared_length(req, res, max_body)) return 100;
    // httplib writes this answer without routing it, so without the Content-Length it
    // adds to routed answers.
    res.set_header("Content-Length", std::to_string(res.body.size()));
    return 413;
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
      msg += ": an exception that is not a std::exception";
    }
    send_error(res, 500, msg, "");
  });
  http.Get("/v1/health", [this](const httplib::Request&, httplib::Response& res) { impl_->health(res); });
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
  http.Delete("/v1/unclean", [this](const httplib::Request&, httplib::Response& res) { impl_->clear_unclean(res); });
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
    while (!served.load() && !m.stop_requested.load()) {
      pollfd p{m.wake_fd, POLLIN, 0};
      if (m.wake_fd < 0) {  // no eventfd: the former 20 ms polling
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      } else {
        (void)::poll(&p, 1, -1);  // EINTR or a wake: the loop condition decides
      }
    }
    {
      std::lock_guard<std::mutex> lk(m.mu);
      m.bump();  // waiting status requests answer now: the connections can close
    }
    while (!served.load()) {
      if (m.server->is_running()) {
        m.server->stop();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  if (!m.stop_requested.load()) m.server->listen_after_bind();
  served.store(true);
  m.wake();
  applier.join();
}

void Server::stop() {
  impl_->stop_requested.store(true);
  impl_->wake();
}

int Server::port() const { return impl_->bound_port; }

}  // namespace harness::agent
