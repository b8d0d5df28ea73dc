#pragma once
// A fake agent for unit tests and the runner's fleet bench (tests/bench/campaign): a
// cpp-httplib server on 127.0.0.1 (free port) implementing harness/agent/API.md v1, returning
// canned bundles built with results::Db (or by `bundle_writer`). Never shipped.
//
// Behaviour per submission is chosen by `outcome(agent_case_id, base_case_id, n)` (n = how
// many times that base case was submitted, 1-based). A case becomes terminal after
// `polls_to_finish` status requests, walking through the phases on the way. A test that must
// act while a given case is in flight holds it (`hold_submission`): that case stays in its
// pressure phase (or the phase `hold_in` names) until release_hold(), and wait_until_held()
// waits for it (no timing guess).
//
// Held to the real agent by the runner contract (tests/common/runner_contract.hpp), which runs
// the same scenarios against both: a spec is refused (400) by the agent's own check
// (harness::agent::check_submitted_spec, with `allowed_dirs` as the data directory); one case
// at a time: a POST while a case has not ended is 409 busy with the agent's own message
// (harness::agent::Busy); a cancel ends a case `cancelled`; a VM marked unclean answers
// POST 412 and DELETE /v1/unclean clears it; a lost bundle (Outcome::LostBundle); what
// happens to the guest itself: replace_guest() (the guest died and a fresh one answers at the
// same address) and reboot() (the guest rebooted with its disk: the agent's restart settling,
// harness/agent/API.md "Agent restart"), each behind a silence (`silent`) as a dead guest is.
#include "harness/agent/cases/case_state.hpp"
#include "harness/agent/routes/server.hpp"
#include "harness/agent/cases/submission.hpp"
#include "harness/agent/cases/unclean_mark.hpp"
#include "results/db.hpp"
#include "tests/common/slurp.hpp"
#include "tests/common/wait_until.hpp"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fake {

enum class Outcome {
  Completed,      ///< completed bundle, trigger + reclaim + clean restoration
  Oom,            ///< completed bundle whose telemetry shows a foreground OOM kill
  InfraBundle,    ///< bundle with cases.status infra_failed
  LostBundle,     ///< bundle with cases.status lost (the executor's own failure after pressure), state lost
  InfraNoBundle,  ///< state infra_failed, bundle 404 (child died without a bundle)
  InfraNoBundleInWarmup,  ///< as InfraNoBundle, but the phase never gets past warmup
  /// Never reports a phase: GET status answers 503 until `unseen_lost_after_ms` passed since
  /// submission, then 404 (0 ms: 404 at once).
  LostUnseen,
};

/// A passing qualification report in the `harness qualify --json` shape (the keys the
/// fleet preflight compares), for source commit `commit`.
inline nlohmann::json passing_qualification(const std::string& commit = "0123456789abcdef0123456789abcdef01234567",
                                            bool dirty = false) {
  return {{"passed", true},
          {"checks", nlohmann::json::array()},
          {"reasons", nlohmann::json::array()},
          {"recorded",
           {{"kernel_release", "6.1.0-57-cloud-amd64"},
            {"swappiness", 60},
            {"mglru_enabled", "0x0007"},
            {"thp_enabled", "madvise"},
            {"clocksource", "kvm-clock"},
            {"source_commit", commit},
            {"source_dirty", dirty},
            {"kernel_config",
             {{"source", "/boot/config-6.1.0-57-cloud-amd64"},
              {"CONFIG_PSI", "y"},
              {"CONFIG_ZRAM", "m"},
              {"CONFIG_MEMCG", "y"},
              {"CONFIG_LRU_GEN", "y"},
              {"CONFIG_CRYPTO_LZO", "y"},
              {"CONFIG_CRYPTO_ZSTD", "m"}}},
            {"compressors", {{"lzo", "/proc/crypto"}, {"lzo-rle", "/proc/crypto"}, {"zstd", nullptr}}},
            {"zswap_enabled", "N"}}}};
}

/// Writes a bundle for `spec` at `path` (results schema). Completed bundles carry phases,
/// 20 canary requests per canary, 5 telemetry rows, a trigger event, a reclaim action for
/// bounded-reclaim, and a clean restoration row.
/// `outcome_source`: when non-empty, cases.source_commit/source_dirty are left NULL and
/// outcome_json.source = {commit: outcome_source, dirty: false} (the v2 executor's shape).
inline void write_bundle(const std::string& path, const nlohmann::json& spec, Outcome o,
                         const std::string& outcome_source = "") {
  std::filesystem::remove(path);
  results::Db db(path, results::Db::Mode::Create);
  const std::string id = spec.at("case_id");
  const bool infra = o == Outcome::InfraBundle;
  const std::int64_t t0 = 1'000'000'000'000;  // monotonic ns
  db.transaction([&] {
    results::Stmt c(db,
                    "INSERT INTO cases(case_id, campaign, vm, regime, repeat, triplet_id, configuration, dose_bytes, "
                    "status, error, accelerator, kernel_release, source_commit, page_size_bytes, started_unix_ns, "
                    "ended_unix_ns, spec_json, outcome_json) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,'tcg',"
                    "'6.1.0-57-cloud-amd64',?12,4096,1,2,?11,?13)");
    c.bind(1, id).bind(2, spec.at("campaign").get<std::string>()).bind(3, spec.at("vm").get<std::string>());
    c.bind(4, spec.at("regime").get<std::string>()).bind(5, spec.at("repeat").get<int>());
    if (spec.contains("triplet_id")) c.bind(6, spec["triplet_id"].get<std::string>());
    else c.bind_null(6);
    c.bind(7, spec.at("configuration").get<std::string>());
    if (spec.contains("dose_bytes")) c.bind(8, spec["dose_bytes"].get<std::int64_t>());
    else c.bind_null(8);
    const bool lost = o == Outcome::LostBundle;
    c.bind(9, infra ? "infra_failed" : lost ? "lost" : "completed");
    if (infra) c.bind(10, "fake: pressure-gen did not start");
    else if (lost) c.bind(10, "canary-sqlite left no readable trace (fake) and fg saw no OOM kill");
    else c.bind_null(10);
    c.bind(11, spec.dump());
    if (outcome_source.empty()) {
      c.bind(12, "fake").bind(13, "{}");
    } else {
      c.bind_null(12);
      c.bind(13, nlohmann::json{{"source", {{"commit", outcome_source}, {"dirty", false}}}}.dump());
    }
    c.run();
    if (infra) return;
    const char* phases[] = {"warmup", "pressure", "recovery", "restoration"};
    for (int i = 0; i < 4; ++i) {
      results::Stmt p(db, "INSERT INTO phases(case_id, phase, start_ns, end_ns) VALUES (?1, ?2, ?3, ?4)");
      p.bind(1, id).bind(2, phases[i]).bind(3, t0 + i * 1'000'000'000L).bind(4, t0 + (i + 1) * 1'000'000'000L);
      p.run();
    }
    for (const char* canary : {"compute", "sqlite"})
      for (int s = 0; s < 20; ++s) {
        results::Stmt r(db,
                        "INSERT INTO canary_requests(case_id, canary, seq, scheduled_ns, wake_ns, completion_ns) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
        const std::int64_t sch = t0 + s * 100'000'000L;
        r.bind(1, id).bind(2, canary).bind(3, s).bind(4, sch).bind(5, sch + 500'000).bind(6, sch + 2'000'000 + s * 1000);
        r.run();
      }
    for (int s = 0; s < 5; ++s) {
      results::Stmt t(db,
                      "INSERT INTO telemetry(case_id, t_ns, phase, bg_some_us, fg_oom_kill, bg_oom_kill) "
                      "VALUES (?1, ?2, 'pressure', ?3, ?4, 0)");
      t.bind(1, id).bind(2, t0 + s * 1'000'000'000L).bind(3, s * 5000);
      t.bind(4, (o == Outcome::Oom && s == 4) ? 1 : 0);
      t.run();
    }
    results::Stmt e(db, "INSERT INTO controller_events(case_id, t_ns, kind) VALUES (?1, ?2, ?3)");
    const bool triggered = spec.at("configuration") != "static-zram";
    e.bind(1, id).bind(2, t0 + 1'000'000'000L + 3'000'000'000L).bind(3, triggered ? "trigger" : "would_trigger");
    e.run();
    if (spec.at("configuration") == "bounded-reclaim") {
      const std::int64_t req = spec.at("dose_bytes");
      results::Stmt a(db,
                      "INSERT INTO reclaim_actions(case_id, requested_bytes, start_ns, end_ns, duration_ns, "
                      "write_errno, achieved_bytes) VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6)");
      a.bind(1, id).bind(2, req).bind(3, t0 + 4'000'000'000L).bind(4, t0 + 4'500'000'000L).bind(5, 500'000'000L);
      a.bind(6, req * 9 / 10);
      a.run();
    }
    results::Stmt r(db, "INSERT INTO restoration(case_id, start_ns, end_ns, clean) VALUES (?1, ?2, ?3, 1)");
    r.bind(1, id).bind(2, t0 + 4'000'000'000L).bind(3, t0 + 5'000'000'000L);
    r.run();
  });
}

class FakeAgent {
 public:
  struct Case {
    nlohmann::json spec;
    Outcome outcome = Outcome::Completed;
    int polls = 0;
    std::string state = "queued";
    std::string last_phase;  ///< last phase reported by GET status
    bool held = false;       ///< stays in `hold_phase` until release_hold()
    std::string hold_phase = "pressure";
    std::chrono::steady_clock::time_point submitted = std::chrono::steady_clock::now();
    bool settled = false;    ///< ended by reboot() (its status error says so)
  };

  FakeAgent(std::string dir, std::string token) : dir_(std::move(dir)), token_(std::move(token)) {
    std::filesystem::create_directories(dir_);
    install();
    server_.set_tcp_nodelay(true);  // as the real agent (http/connection_guard.cpp): no 40 ms ACK waits
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    if (!test_support::wait_until([this] { return server_.is_running(); }, std::chrono::seconds(30)))
      throw std::runtime_error("fake agent: the HTTP server on port " + std::to_string(port_) +
                               " was not listening after 30 s");
  }
  ~FakeAgent() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  /// Chooses the outcome of a submission (default: Completed).
  std::function<Outcome(const std::string& base_id, int n)> outcome = [](const std::string&, int) {
    return Outcome::Completed;
  };
  int polls_to_finish = 3;
  int unseen_lost_after_ms = 0;  ///< Outcome::LostUnseen: 503 for this long, then 404
  /// Non-empty: bundles carry the source commit only in outcome_json.source (see write_bundle).
  std::string bundle_source_commit;
  /// Set: writes the bundle of a finished case at `path` instead of write_bundle (the fleet
  /// bench writes study-sized bundles with harness::case_::write_bundle). Called once per case.
  std::function<void(const std::string& path, const nlohmann::json& spec, Outcome o)> bundle_writer;
  /// Answer of GET /v1/qualification (default: passing_qualification()).
  nlohmann::json qualification = passing_qualification();
  std::atomic<int> qualification_gets{0};
  std::atomic<int> status_503_left{0};  ///< answer this many GET status with 503 first
  int post_reply_delay_ms = 0;          ///< accept the case, then hold the POST reply this long
  /// Where a spec's swapfile and canary database may lie (the agent's --data-dir default).
  std::vector<std::string> allowed_dirs{harness::agent::AgentOptions{}.data_dir};
  std::atomic<int> health_503_left{0};  ///< answer this many GET /v1/health with 503 first
  std::atomic<bool> health_down{false};  ///< answer every GET /v1/health with 503 while set
  std::atomic<int> health_gets{0};
  /// While set, every request (health, status, bundle, POST) is answered 503: a network
  /// partition as the runner sees it. silent_answers counts those answers.
  std::atomic<bool> silent{false};
  std::atomic<int> silent_answers{0};
  /// GET /v1/health boot_id ("" = not reported). Changing it is a reboot of the guest.
  std::string boot_id() {
    std::lock_guard<std::mutex> lk(mu_);
    return boot_id_;
  }
  void set_boot_id(const std::string& id) {
    std::lock_guard<std::mutex> lk(mu_);
    boot_id_ = id;
  }
  /// Bundles downloaded (GET .../bundle answered 200).
  std::atomic<int> bundle_downloads{0};
  /// GET /v1/health "unclean" (null = usable; an object marks the VM unusable, as the real
  /// agent does after an unclean restoration: POST then answers 412 until DELETE /v1/unclean).
  /// Set it before the server serves a request, or use reboot() / DELETE /v1/unclean.
  nlohmann::json unclean = nullptr;

  /// The `hold_submission`-th accepted POST (1-based, every case counted; 0 = none) is held:
  /// its status walks to "pressure" and stays there until release_hold().
  int hold_submission = 0;
  /// Waits until the held case has answered a status poll in its pressure phase (the runner
  /// is then following it and can go no further on this agent); false after `limit`.
  bool wait_until_held(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lk(mu_);
    return held_cv_.wait_for(lk, limit, [this] { return held_seen_; });
  }
  /// Holds a submission in a phase: called at each accepted POST with the base case id and
  /// how many times it was submitted (1-based); "warmup" or "pressure" holds that submission
  /// there as `hold_submission` does in pressure, "" (the default) does not.
  std::function<std::string(const std::string& base_id, int n)> hold_in;
  /// Lets the held case finish (its remaining polls as usual); the next hold is waited for anew.
  void release_hold() {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto& [id, c] : cases_) c.held = false;
    hold_submission = 0;
    held_seen_ = false;
  }

  /// The guest died and a fresh guest (new data disk, new boot) answers at the same address,
  /// as `harness vm reboot` gives: its agent knows no case (404) and has no unclean mark.
  void replace_guest(const std::string& new_boot_id) {
    std::lock_guard<std::mutex> lk(mu_);
    cases_.clear();
    unclean = nullptr;
    boot_id_ = new_boot_id;
  }

  /// The guest rebooted with its disk (boot id `new_boot_id`): the restarted agent settles every
  /// case that had not ended as the real one does (harness/agent/cases/restart_settling.cpp): no
  /// bundle, `lost` when it had reported the pressure phase or later, else `infra_failed`, and
  /// the VM marked unclean naming that case (its state is unknown).
  void reboot(const std::string& new_boot_id) {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto& [id, c] : cases_) {
      if (finished(c.state)) continue;
      const bool after = c.last_phase == "pressure" || c.last_phase == "recovery" || c.last_phase == "restoration";
      c.state = after ? "lost" : "infra_failed";
      c.outcome = Outcome::InfraNoBundle;  // finished, no bundle
      c.polls = polls_to_finish;
      c.held = false;
      c.settled = true;
      unclean = {{"case_id", id},
                 {"problems", {"no restoration verdict: the agent running case " + id +
                               " stopped before its executor ended and no bundle was written (fake)"}}};
    }
    boot_id_ = new_boot_id;
  }

  /// Submissions per base case id (the id without a ".aN" attempt suffix).
  std::map<std::string, int> submissions() {
    std::lock_guard<std::mutex> lk(mu_);
    return submissions_;
  }
  int posts() const { return posts_.load(); }
  /// The query of every status request that reached a case, in order, as "k=v&k=v" sorted
  /// by key ("" for none). This fake ignores it and answers at once, as an agent without
  /// waiting status requests does.
  std::vector<std::string> status_queries() {
    std::lock_guard<std::mutex> lk(mu_);
    return status_queries_;
  }
  int gets() const { return gets_.load(); }

 private:
  /// A final state: the case no longer holds the agent's busy slot.
  static bool finished(const std::string& state) {
    return state == "completed" || state == "infra_failed" || state == "lost" || state == "cancelled";
  }
  static std::string base_id(const std::string& id) {
    const auto p = id.rfind(".a");
    return p == std::string::npos ? id : id.substr(0, p);
  }
  bool authorised(const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Authorization") == "Bearer " + token_) return true;
    res.status = 401;
    res.set_content(R"({"error":"unauthorised"})", "application/json");
    return false;
  }

  void install() {
    server_.set_pre_routing_handler([this](const httplib::Request&, httplib::Response& res) {
      if (!silent) return httplib::Server::HandlerResponse::Unhandled;
      ++silent_answers;
      res.status = 503;
      return httplib::Server::HandlerResponse::Handled;
    });
    server_.Get("/v1/health", [this](const httplib::Request&, httplib::Response& res) {
      ++gets_;
      ++health_gets;
      if (health_down || health_503_left > 0) {
        if (health_503_left > 0) --health_503_left;
        res.status = 503;
        return;
      }
      nlohmann::json h = {{"status", "ok"}, {"version", "fake"}, {"source_commit", "fake"}, {"busy", false}};
      {
        std::lock_guard<std::mutex> lk(mu_);
        h["unclean"] = unclean;
        if (!boot_id_.empty()) h["boot_id"] = boot_id_;
      }
      res.set_content(h.dump(), "application/json");
    });
    server_.Get("/v1/qualification", [this](const httplib::Request& req, httplib::Response& res) {
      ++gets_;
      ++qualification_gets;
      if (!authorised(req, res)) return;
      std::lock_guard<std::mutex> lk(mu_);
      res.set_content(qualification.dump(), "application/json");
    });
    server_.Post("/v1/cases", [this](const httplib::Request& req, httplib::Response& res) {
      ++posts_;
      if (!authorised(req, res)) return;
      // The agent's order (harness/agent/cases/submission.cpp): the spec, the mark, the busy slot, the id.
      const auto checked = harness::agent::check_submitted_spec(req.body, allowed_dirs);
      if (!checked.accepted()) {
        res.status = 400;
        res.set_content(nlohmann::json{{"error", checked.error},
                                       {"field", checked.field.empty() ? nlohmann::json() : nlohmann::json(checked.field)}}
                            .dump(),
                        "application/json");
        return;
      }
      auto spec = nlohmann::json::parse(req.body);
      const std::string id = checked.spec->case_id;
      {
        std::lock_guard<std::mutex> lk(mu_);
        if (!unclean.is_null()) {
          const std::string msg = harness::agent::UncleanMark::message(unclean);
          res.status = 412;
          res.set_content(nlohmann::json{{"error", msg}, {"field", nullptr}, {"reasons", {"unclean_restoration: " + msg}}}
                              .dump(),
                          "application/json");
          return;
        }
        for (const auto& [other, c] : cases_)
          if (!finished(c.state)) {
            const harness::agent::Busy busy{harness::agent::Busy::Holder::Case, other, -1};
            res.status = 409;
            res.set_content(nlohmann::json{{"error", busy.message()}, {"field", nullptr}, {"running_case_id", other}}.dump(),
                            "application/json");
            return;
          }
        if (cases_.count(id)) {
          res.status = 409;
          res.set_content(nlohmann::json{{"error", "case id " + id + " already used on this agent"}, {"field", "case_id"}}
                              .dump(),
                          "application/json");
          return;
        }
        const int n = ++submissions_[base_id(id)];
        cases_[id] = Case{spec, outcome(base_id(id), n), 0, "queued", "", false, "pressure",
                          std::chrono::steady_clock::now()};
        cases_[id].held = ++accepted_ == hold_submission;
        if (const std::string ph = hold_in ? hold_in(base_id(id), n) : ""; !ph.empty()) {
          cases_[id].held = true;
          cases_[id].hold_phase = ph;
        }
      }
      if (post_reply_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(post_reply_delay_ms));
      res.status = 202;
      res.set_content(nlohmann::json{{"case_id", id}}.dump(), "application/json");
    });
    server_.Get(R"(/v1/cases/([A-Za-z0-9._-]+))", [this](const httplib::Request& req, httplib::Response& res) {
      ++gets_;
      if (!authorised(req, res)) return;
      if (status_503_left > 0) {
        --status_503_left;
        res.status = 503;
        return;
      }
      std::lock_guard<std::mutex> lk(mu_);
      std::string q;
      for (const auto& [k, v] : req.params) q += (q.empty() ? "" : "&") + k + "=" + v;
      status_queries_.push_back(q);
      auto it = cases_.find(req.matches[1]);
      if (it == cases_.end()) {
        res.status = 404;
        res.set_content(R"({"error":"unknown case"})", "application/json");
        return;
      }
      Case& c = it->second;
      if (c.outcome == Outcome::LostUnseen) {
        if (std::chrono::steady_clock::now() - c.submitted < std::chrono::milliseconds(unseen_lost_after_ms)) {
          res.status = 503;
          return;
        }
        cases_.erase(it);
        res.status = 404;
        res.set_content(R"({"error":"unknown case"})", "application/json");
        return;
      }
      static const char* phases[] = {"setup", "warmup", "pressure", "recovery", "restoration"};
      std::string phase = "done";
      const int idx_now = std::min(4, c.polls * 5 / std::max(1, polls_to_finish));
      const int hold_idx = c.hold_phase == "warmup" ? 1 : 2;
      if (c.state == "cancelled") {
        phase = "done";
      } else if (c.held && (c.polls >= polls_to_finish || idx_now >= hold_idx)) {
        phase = phases[hold_idx];
        c.last_phase = phase;
        c.state = "running";
        held_seen_ = true;
        held_cv_.notify_all();
      } else if (c.polls < polls_to_finish) {
        int idx = idx_now;
        if (c.outcome == Outcome::InfraNoBundleInWarmup) idx = std::min(idx, 1);
        phase = phases[idx];
        c.last_phase = phase;
        c.state = "running";
        ++c.polls;
      } else if (!finished(c.state)) {
        const std::string path = dir_ + "/" + it->first + ".db";
        if (c.outcome == Outcome::InfraNoBundle || c.outcome == Outcome::InfraNoBundleInWarmup) {
          c.state = "infra_failed";
        } else {
          if (bundle_writer) bundle_writer(path, c.spec, c.outcome);
          else write_bundle(path, c.spec, c.outcome, bundle_source_commit);
          c.state = c.outcome == Outcome::InfraBundle  ? "infra_failed"
                    : c.outcome == Outcome::LostBundle ? "lost"
                                                       : "completed";
        }
      }
      nlohmann::json j{{"case_id", it->first}, {"state", c.state}, {"phase", phase}, {"error", nullptr}};
      if (c.state == "infra_failed") j["error"] = "fake: child died";
      if (c.state == "lost") j["error"] = "canary-sqlite left no readable trace (fake)";
      if (c.settled) j["error"] = "settled when the agent restarted (fake): no bundle (last phase " + c.last_phase + ")";
      res.set_content(j.dump(), "application/json");
    });
    server_.Get(R"(/v1/cases/([A-Za-z0-9._-]+)/bundle)", [this](const httplib::Request& req, httplib::Response& res) {
      ++gets_;
      if (!authorised(req, res)) return;
      std::lock_guard<std::mutex> lk(mu_);
      auto it = cases_.find(req.matches[1]);
      const std::string path = dir_ + "/" + std::string(req.matches[1]) + ".db";
      if (it == cases_.end() || !std::filesystem::exists(path)) {  // API.md: 409 not finished, else 404
        res.status = it != cases_.end() && !finished(it->second.state) ? 409 : 404;
        res.set_content(R"({"error":"no bundle"})", "application/json");
        return;
      }
      ++bundle_downloads;
      res.set_content(test_support::slurp(path), "application/vnd.sqlite3");
    });
    // A cancel ends a case that has not ended `cancelled` (the real agent's executor restores
    // and exits first; this one has nothing to restore), and frees the busy slot.
    server_.Post(R"(/v1/cases/([A-Za-z0-9._-]+)/cancel)", [this](const httplib::Request& req, httplib::Response& res) {
      ++posts_;
      if (!authorised(req, res)) return;
      std::lock_guard<std::mutex> lk(mu_);
      auto it = cases_.find(req.matches[1]);
      if (it == cases_.end()) {
        res.status = 404;
        res.set_content(R"({"error":"unknown case"})", "application/json");
        return;
      }
      if (!finished(it->second.state)) {
        it->second.state = "cancelled";
        it->second.held = false;
      }
      res.status = 202;
      res.set_content(nlohmann::json{{"case_id", it->first}, {"state", it->second.state}}.dump(), "application/json");
    });
    server_.Delete("/v1/unclean", [this](const httplib::Request& req, httplib::Response& res) {
      if (!authorised(req, res)) return;
      std::lock_guard<std::mutex> lk(mu_);
      if (unclean.is_null()) {
        res.status = 404;
        res.set_content(R"({"error":"the VM is not marked unclean","field":null})", "application/json");
        return;
      }
      res.set_content(nlohmann::json{{"cleared", unclean}}.dump(), "application/json");
      unclean = nullptr;
    });
  }

  std::string dir_, token_;
  std::string boot_id_;  ///< under mu_
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::map<std::string, Case> cases_;
  std::map<std::string, int> submissions_;
  std::vector<std::string> status_queries_;  ///< under mu_
  int accepted_ = 0;          ///< POSTs accepted (under mu_)
  bool held_seen_ = false;    ///< the held case answered a poll in pressure (under mu_)
  std::condition_variable held_cv_;
  std::atomic<int> posts_{0}, gets_{0};
};

}  // namespace fake
