// The campaign runner (see runner.hpp).
#include "harness/campaign/runner.hpp"

#include "harness/agent/client.hpp"
#include "harness/campaign/campaign_db.hpp"
#include "harness/campaign/preflight.hpp"
#include "harness/campaign/progress.hpp"
#include "harness/campaign/schedule.hpp"
#include "harness/vm/accel.hpp"
#include "harness/vm/subprocess.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

namespace fs = std::filesystem;

namespace harness::campaign {

std::vector<Host> resolve_hosts(const Campaign& c, const RunOptions& opt) {
  std::string file = opt.hosts_file;
  if (file.empty() && c.provider == "hosts") {
    if (c.hosts_file.empty())
      throw CampaignError(c.file + ": field provider.hosts_file: not set and no --hosts given");
    file = c.hosts_file;
  }
  if (file.empty()) {  // local-qemu: boot the VMs (VM engineer's `harness vm up`)
    const fs::path dir = fs::absolute(opt.db_path).parent_path();
    file = (dir / (c.name + ".hosts.yaml")).string();
    const std::string accel = hvm::effective_accel_request(opt.accelerator, c.accelerator);
    const int rc = hvm::run_passthrough({opt.self_exe, "vm", "up", "--count", std::to_string(c.vm_count), "--hosts-file", file,
                                   "--memory-mib", std::to_string(c.memory_mib), "--vcpus", std::to_string(c.vcpus),
                                   "--fresh-per-case", c.fresh_guest_per_case ? "1" : "0", "--accel", accel});
    if (rc != 0)
      throw CampaignError("local VMs: `harness vm up --count " + std::to_string(c.vm_count) + " --hosts-file " + file +
                          "` exited with status " + std::to_string(rc));
  }
  auto hosts = load_hosts(file);
  std::set<std::string> have;
  for (const auto& h : hosts) have.insert(h.name);
  for (const auto& vm : c.vms)
    if (!have.count(vm)) throw CampaignError(file + ": no host named '" + vm + "' (the campaign's design uses it)");
  return hosts;
}

namespace {

/// One VM's worker: runs its cases in schedule order, one at a time.
class Worker {
 public:
  Worker(const Campaign& c, const RunOptions& opt, Host host, std::vector<const ScheduledCase*> cases,
         Progress& prog, std::atomic<int>& attempts, VmQualification qual)
      : c_(c), opt_(opt), host_(std::move(host)), cases_(std::move(cases)), prog_(prog), attempts_(attempts),
        qual_(std::move(qual)) {}

  void run() {
    try {
      results::Db db(opt_.db_path, results::Db::Mode::ReadWrite);
      db_ = &db;
      agent::ClientOptions co;
      co.request_timeout = std::chrono::milliseconds(opt_.request_timeout_ms);
      client_ = std::make_unique<agent::AgentClient>(agent::AgentClient::from_token_file(host_.url, host_.token_file, co));
      for (const auto* k : cases_) {
        for (;;) {
          const auto p = case_progress(*db_, k->case_id);
          if (p.state == "completed" || p.state == "lost") break;  // outcomes: never rerun (PROTOCOL.md)
          if (p.runs_since_mark >= 1 + c_.max_infra_retries) break;  // left infra_failed
          ++attempts_;
          attempt(*k, p.last_attempt + 1);
        }
      }
    } catch (const std::exception& e) {
      // Host-level problem (token file unreadable, DB error): its cases stay as they are.
      prog_.note(host_.name, std::string("worker stopped: ") + e.what());
    }
    db_ = nullptr;
  }

 private:
  static std::int64_t now() { return unix_now_ns(); }

  /// What polling saw of the case (PROTOCOL.md: the last phase decides lost vs infra_failed).
  struct Seen {
    std::string phase;                 ///< last phase reported (setup..restoration); "" = never
    std::int64_t last_seen_unix_ns = 0;
    std::chrono::steady_clock::time_point submitted;
  };

  static bool pressure_started(const std::string& phase) {
    return phase == "pressure" || phase == "recovery" || phase == "restoration";
  }

  nlohmann::json detail_of(const Seen& s) const {
    return {{"phase", s.phase.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.phase)},
            {"last_seen_unix_ns", s.last_seen_unix_ns ? nlohmann::json(s.last_seen_unix_ns) : nlohmann::json(nullptr)}};
  }

  void fail(AttemptRecord& a, const std::string& msg) {
    a.ended_unix_ns = now();
    record_infra_failure(*db_, a, msg);
    const auto p = case_progress(*db_, a.case_id);
    prog_.finish(host_.name, a.case_id, "infra_failed", msg, p.runs_since_mark >= 1 + c_.max_infra_retries);
  }

  /// The case vanished after submission (agent or guest lost, case unknown, cancelled,
  /// timed out, no bundle). PROTOCOL.md: lost once the pressure phase started; before it,
  /// infra_failed (rerun). Phase never seen (assumption): lost when the time since
  /// submission exceeds warmup + the executor's start lead (case/SPEC.md: 3 s).
  void vanished(const ScheduledCase& k, AttemptRecord& a, const Seen& seen, const std::string& msg) {
    a.detail = detail_of(seen);
    bool lost = pressure_started(seen.phase);
    std::string why = msg;
    if (seen.phase.empty()) {
      const auto since = std::chrono::steady_clock::now() - seen.submitted;
      lost = since > std::chrono::seconds(c_.warmup_s + kStartLeadS);
      why += lost ? " (phase never seen; " : " (phase never seen; only ";
      why += std::to_string(std::chrono::duration_cast<std::chrono::seconds>(since).count()) +
             " s since submission, warmup + start lead = " + std::to_string(c_.warmup_s + kStartLeadS) + " s)";
    }
    if (!lost) return fail(a, why);
    a.ended_unix_ns = now();
    record_lost(*db_, k, c_.name, a,
                LostCase{seen.phase, seen.last_seen_unix_ns, why, qual_.source_commit, qual_.source_dirty});
    prog_.finish(host_.name, a.case_id, "lost", why, true);
  }

  void attempt(const ScheduledCase& k, int n) {
    AttemptRecord a{k.case_id, n, host_.name + " " + host_.url, now(), 0, nullptr};
    prog_.start(host_.name, k.case_id, n);
    const std::string id = agent_case_id(k.case_id, n);
    nlohmann::json spec = k.spec;
    spec["case_id"] = id;
    // 1. Does the agent already know this case (runner killed while it ran)? Adopt it:
    //    its result was never imported, so importing it now is neither a loss nor a rerun.
    bool adopt = false;
    try {
      client_->status(id);
      adopt = true;
      prog_.note(host_.name, "adopting " + id + " already known to the agent");
    } catch (const agent::CaseNotFound&) {
    } catch (const agent::AgentError& e) {
      if (!(host_.local && c_.fresh_guest_per_case)) return fail(a, e.what());
    }
    if (!adopt) {
      if (host_.local && c_.fresh_guest_per_case) {
        prog_.phase(host_.name, "reboot");
        const int rc = hvm::run_passthrough({opt_.self_exe, "vm", "reboot", host_.name});
        if (rc != 0) return fail(a, "`harness vm reboot " + host_.name + "` exited with status " + std::to_string(rc));
      }
      if (auto err = submit_or_adopt(spec, id)) return fail(a, *err);
    }
    // 2. Poll until finished, the agent is lost, or the case times out.
    Seen seen;
    seen.submitted = std::chrono::steady_clock::now();
    const auto t0 = seen.submitted;
    const auto timeout = std::chrono::seconds(c_.case_timeout_s);
    const auto lost_after = std::max(std::chrono::milliseconds(60000), std::chrono::milliseconds(c_.poll_interval_ms) * 10);
    std::optional<std::chrono::steady_clock::time_point> lost_since;
    agent::CaseStatus st;
    for (;;) {
      try {
        st = client_->status(id);
        lost_since.reset();
        seen.last_seen_unix_ns = now();
        if (!st.phase.empty() && st.phase != "done") seen.phase = st.phase;
        if (!st.phase.empty()) prog_.phase(host_.name, st.phase);
        if (st.finished()) break;
      } catch (const agent::CaseNotFound& e) {
        return vanished(k, a, seen, std::string("agent no longer knows the case (guest restarted?): ") + e.what());
      } catch (const agent::AgentError& e) {
        const auto t = std::chrono::steady_clock::now();
        if (!lost_since) lost_since = t;
        if (t - *lost_since > lost_after) return vanished(k, a, seen, std::string("agent lost: ") + e.what());
      }
      if (std::chrono::steady_clock::now() - t0 > timeout) {
        try {
          client_->cancel(id);
        } catch (const std::exception&) {
        }
        return vanished(k, a, seen,
                        "case timed out after " + std::to_string(c_.case_timeout_s) + " s (runner.case_timeout_s)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(c_.poll_interval_ms));
    }
    a.detail = detail_of(seen);
    if (st.state == "cancelled") return vanished(k, a, seen, "agent reports the case cancelled");
    // 3. Bundle -> one transaction (rows + schedule.state + attempts row).
    const fs::path dir = fs::absolute(opt_.db_path).parent_path() / ".bundles";
    fs::create_directories(dir);
    const fs::path bundle = dir / (k.case_id + ".a" + std::to_string(n) + ".db");
    try {
      client_->download_bundle(id, bundle.string());
    } catch (const agent::AgentError& e) {
      if (st.state == "infra_failed")
        return vanished(k, a, seen,
                        "agent: " + (st.error.empty() ? std::string("infra_failed without a bundle") : st.error));
      return vanished(k, a, seen, std::string("bundle download failed: ") + e.what());
    }
    a.ended_unix_ns = now();
    std::string status;
    try {
      rename_bundle_case(bundle.string(), id, k.case_id);
      status = import_attempt(*db_, bundle.string(), a);
    } catch (const std::exception& e) {
      return fail(a, std::string("bundle import failed (kept at ") + bundle.string() + "): " + e.what());
    }
    std::error_code ec;
    fs::remove(bundle, ec);
    prog_.finish(host_.name, k.case_id, status, status == "completed" ? "" : st.error,
                 status != "completed" && case_progress(*db_, k.case_id).runs_since_mark >= 1 + c_.max_infra_retries);
  }

  /// POSTs the spec and makes sure an accepted case is never lost (issue: a POST whose
  /// reply is lost may still have started the case). Returns an error for an attempt that
  /// failed before any case started (infra), nullopt when the case runs (submitted or
  /// adopted).
  /// - reply lost (timeout, dropped connection, 5xx): ask the agent for the case id; if it
  ///   has it, adopt it; if it answers 404 it was not accepted; if it does not answer, keep
  ///   asking for the lost-agent grace time before giving up;
  /// - 409: the id already running there is adopted; busy with another case means wait
  ///   (poll interval) and submit again, up to runner.case_timeout_s, without spending an attempt.
  std::optional<std::string> submit_or_adopt(const nlohmann::json& spec, const std::string& id) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto poll = std::chrono::milliseconds(c_.poll_interval_ms);
    const auto grace = std::max(std::chrono::milliseconds(60000), poll * 10);
    bool noted_busy = false;
    for (;;) {
      try {
        client_->submit(spec);
        return std::nullopt;
      } catch (const agent::AgentConflict& e) {
        try {
          client_->status(id);
          prog_.note(host_.name, "agent already runs " + id + ": adopting it");
          return std::nullopt;
        } catch (const agent::AgentError&) {
        }
        if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(c_.case_timeout_s))
          return std::string("agent stayed busy with another case for ") + std::to_string(c_.case_timeout_s) +
                 " s (runner.case_timeout_s): " + e.what();
        if (!noted_busy) prog_.note(host_.name, std::string("agent busy, waiting: ") + e.what());
        noted_busy = true;
        std::this_thread::sleep_for(poll);
      } catch (const agent::SpecRejected& e) {
        return std::string(e.what());
      } catch (const agent::NotQualified& e) {
        return std::string(e.what());
      } catch (const agent::AgentUnauthorised& e) {
        return std::string(e.what());
      } catch (const agent::AgentError& e) {
        // The reply is lost, not necessarily the case: ask before counting a failure.
        const std::string post_error = e.what();
        for (;;) {
          try {
            client_->status(id);
            prog_.note(host_.name, "POST reply lost (" + post_error + "); the agent has " + id + ": adopting it");
            return std::nullopt;
          } catch (const agent::CaseNotFound&) {
            return "submission not accepted: " + post_error;
          } catch (const agent::AgentError& e2) {
            if (std::chrono::steady_clock::now() - t0 > grace)
              return "submission failed and the agent did not answer for " +
                     std::to_string(std::chrono::duration_cast<std::chrono::seconds>(grace).count()) +
                     " s: " + post_error + "; last: " + e2.what();
          }
          std::this_thread::sleep_for(poll);
        }
      }
    }
  }

  /// The executor's default lead from start to T0 (case/SPEC.md `--start-lead-s`), seconds.
  static constexpr int kStartLeadS = 3;

  const Campaign& c_;
  const RunOptions& opt_;
  Host host_;
  std::vector<const ScheduledCase*> cases_;
  Progress& prog_;
  std::atomic<int>& attempts_;
  results::Db* db_ = nullptr;
  std::unique_ptr<agent::AgentClient> client_;
  VmQualification qual_;  ///< this VM's qualification before scheduling (source of a lost case)
};

}  // namespace

RunSummary run_campaign(const Campaign& c, const RunOptions& opt) {
  Schedule planned = plan(c);
  Schedule s;
  {
    results::Db db(opt.db_path, results::Db::Mode::Create);
    if (!has_plan(db)) store_plan(db, c, planned);
    s = load_verified_plan(db);  // throws ScheduleTampered
    if (s.sha256_hex != planned.sha256_hex)
      throw ScheduleTampered(opt.db_path + ": the stored schedule (sha256 " + s.sha256_hex +
                             ") is not the plan of " + c.file + " (sha256 " + planned.sha256_hex +
                             "): the campaign changed after planning; use a new DB");
  }
  RunSummary sum;
  sum.planned = static_cast<int>(s.cases.size());
  int done_before = 0;
  {
    results::Db db(opt.db_path, results::Db::Mode::ReadWrite);
    for (const auto& [id, p] : load_progress(db))
      if (p.state == "completed" || p.state == "lost") ++done_before;
  }
  std::vector<Host> hosts;
  bool booted_local = false;
  if (done_before < sum.planned) {
    hosts = resolve_hosts(c, opt);
    booted_local = opt.hosts_file.empty() && c.provider == "local-qemu";
  }
  auto stop_local = [&] {  // stop only the guests this run booted (others may share the cache)
    if (!booted_local) return;
    std::vector<std::string> down{opt.self_exe, "vm", "down"};
    for (const auto& vm : c.vms) down.push_back(vm);
    hvm::run_passthrough(down);
  };
  Preflight pf;
  if (!hosts.empty()) {  // qualification before scheduling (study; PROTOCOL.md), after `vm up`
    pf = fleet_preflight(c, hosts);
    if (opt.preflight_out) *opt.preflight_out = pf.table;
    if (!pf.ok) {
      stop_local();
      throw PreflightRefused("qualification before scheduling refused the run (no case submitted):\n" + pf.table);
    }
  }
  const bool tty = opt.progress_tty < 0 ? isatty(STDERR_FILENO) != 0 : opt.progress_tty == 1;
  std::atomic<int> attempts{0};
  {
    Progress prog(sum.planned, done_before, tty);
    std::vector<std::unique_ptr<Worker>> workers;
    std::vector<std::thread> threads;
    for (const auto& vm : c.vms) {
      std::vector<const ScheduledCase*> mine;
      for (const auto& k : s.cases)
        if (k.vm == vm) mine.push_back(&k);  // s.cases is in ordinal order = per-VM order
      const Host* h = nullptr;
      for (const auto& x : hosts)
        if (x.name == vm) h = &x;
      if (!h) continue;  // nothing left to run
      VmQualification q;
      for (const auto& x : pf.vms)
        if (x.vm == vm) q = x;
      workers.push_back(std::make_unique<Worker>(c, opt, *h, std::move(mine), prog, attempts, q));
    }
    for (auto& w : workers) threads.emplace_back([&w] { w->run(); });
    for (auto& t : threads) t.join();
    prog.stop();
  }
  stop_local();
  results::Db db(opt.db_path, results::Db::Mode::ReadWrite);
  for (const auto& [id, p] : load_progress(db)) {
    if (p.state == "completed") ++sum.completed;
    else if (p.state == "lost") ++sum.lost;
    else if (p.state == "infra_failed" && p.runs_since_mark >= 1 + c.max_infra_retries) ++sum.infra_failed;
    else ++sum.pending;
  }
  sum.attempts_this_run = attempts.load();
  return sum;
}

}  // namespace harness::campaign
