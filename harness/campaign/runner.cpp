// The campaign runner (see runner.hpp).
#include "harness/campaign/runner.hpp"
#include "harness/campaign/new_db_files.hpp"

#include "harness/agent/client.hpp"
#include "harness/agent/unclean_mark.hpp"
#include "harness/campaign/campaign_db.hpp"
#include "harness/campaign/pilot_match.hpp"
#include "harness/campaign/preflight.hpp"
#include "harness/campaign/progress.hpp"
#include "harness/campaign/schedule.hpp"
#include "harness/pool/agent_wait.hpp"
#include "harness/pool/capacity.hpp"
#include "harness/pool/engine.hpp"
#include "harness/pool/hosts/hosts_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

namespace fs = std::filesystem;

namespace harness::campaign {

namespace {
/// "variants.NAME" of the first variant that boots (kernel image or cmdline), "" when none does.
std::string booting_variant(const Campaign& c) {
  for (const auto& v : c.variants)
    if (!v.kernel_image_dir.empty() || !v.cmdline.empty()) return "variants." + v.name;
  return "";
}

/// The refusal when a variant boots but `not_booted` (guests the engine does not boot per case)
/// is not empty: such a guest would run every case on the kernel it already runs, so the
/// variants would compare that kernel with itself. "" when nothing is refused.
std::string variant_boot_refusal(const Campaign& c, const std::vector<std::string>& not_booted) {
  const std::string v = booting_variant(c);
  if (v.empty() || not_booted.empty()) return "";
  std::string names;
  for (const auto& n : not_booted) names += (names.empty() ? "" : ", ") + n;
  return c.file + ": " + v + " boots a kernel image or cmdline, but the engine does not boot " + names +
         " for each case (a hosts entry without `local: true`): every case there would run on the kernel the VM "
         "already runs, and the variants would compare it with itself. Run this campaign on an engine that boots "
         "its guests (provider.kind " +
         pool::engine_kinds_where([](const pool::Capabilities& k) { return k.fresh_boot_per_case && k.boot_variants; }) +
         "), or drop the kernel/cmdline of the variants";
}

/// A refusal for the kernel the guests run or would run, before any case: the campaign DB goes
/// again when this run created it (it holds only the plan; the same command plans it again).
PreflightRefused kernel_refusal(const std::string& why, const NewDbFiles& new_db, const std::string& db_path) {
  if (!new_db.discard()) return PreflightRefused(why);
  return PreflightRefused(why + " (" + db_path + " removed: this run created it and ran no case)");
}
}  // namespace

pool::BootRequest boot_request(const nlohmann::json& spec) {
  pool::BootRequest r;
  if (!spec.contains("variant") || !spec["variant"].is_object()) return r;
  const auto& v = spec["variant"];
  if (v.contains("kernel_image_dir") && v["kernel_image_dir"].is_string())
    r.image_dir = v["kernel_image_dir"].get<std::string>();
  if (v.contains("cmdline") && v["cmdline"].is_array())
    for (const auto& p : v["cmdline"]) r.cmdline.push_back(p.get<std::string>());
  return r;
}

namespace {

pool::OpenContext open_context(const Campaign& c, const std::string& hosts_file) {
  pool::OpenContext o;
  o.campaign_file = c.file;
  o.vcpus = c.vcpus;
  o.memory_mib = c.memory_mib;
  o.hosts_file = hosts_file;
  return o;
}

pool::CapacityVerdict judge(const Campaign& c, pool::Pool& p) {
  return pool::check_capacity(p.capacity(), pool::GuestShape{c.vcpus, c.memory_mib},
                              c.engine && c.engine->overcommit, p.kind());
}

}  // namespace

EnginePreview preview_engine(const Campaign& c, const std::string& hosts_file) {
  const auto p = pool::open_pool(c.engine, open_context(c, hosts_file));
  EnginePreview e;
  e.kind = p->kind();
  e.describe = p->describe();
  e.capacity = judge(c, *p);
  for (const auto& h : e.capacity.hosts) e.costs.push_back(pool::read_host_costs(e.kind, h.capacity.host));
  const auto* engine = pool::find_engine(e.kind);
  e.fresh_boot_per_case = engine && engine->capabilities.fresh_boot_per_case && c.engine && c.engine->fresh_guest_per_case;
  const auto hosts = pool::hosts::preview_hosts(hosts_file, c.vms, c.file);  // nothing without --hosts FILE
  e.reboot_between_cases = hosts.reboot_between_cases;
  if (const auto why = variant_boot_refusal(c, hosts.not_booted); !why.empty()) throw pool::PoolError(why);
  return e;
}

namespace {

/// One runner per campaign DB (runner.hpp): flock on DB + ".runner.lock", released by the
/// kernel when the process dies (kill -9 included). The fd is close-on-exec so that no
/// program an engine starts (a daemonized hypervisor process, ...) inherits it.
class RunnerLock {
 public:
  explicit RunnerLock(const std::string& db_path) {
    path_ = db_path + ".runner.lock";
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw CampaignError(path_ + ": cannot open the runner lock: " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      char buf[32] = {};
      const auto n = ::pread(fd_, buf, sizeof buf - 1, 0);
      ::close(fd_);
      throw CampaignError(db_path + ": another `harness run` (pid " + (n > 0 ? std::string(buf, n) : "?") +
                          ") is running this campaign DB; wait for it to finish or stop it first");
    }
    const std::string pid = std::to_string(::getpid());
    if (::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    }
  }
  ~RunnerLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  RunnerLock(const RunnerLock&) = delete;
  RunnerLock& operator=(const RunnerLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

/// One VM's worker: runs its cases in schedule order, one at a time.
class Worker {
 public:
  Worker(const Campaign& c, const RunOptions& opt, pool::Instance& instance, const std::string& engine_kind,
         std::optional<bool> overcommitted, std::vector<const ScheduledCase*> cases, Progress& prog,
         std::atomic<int>& attempts, std::atomic<int>& takeovers, VmQualification qual)
      : c_(c), opt_(opt), instance_(instance), guest_(instance.guest()),
        ran_on_{guest_.accelerator, guest_.host, overcommitted, engine_kind}, cases_(std::move(cases)), prog_(prog),
        attempts_(attempts), takeovers_(takeovers), qual_(std::move(qual)) {
    fresh_ = instance_.fresh_boot_per_case();
    agent_reboot_ = guest_.reboot_between_cases;
  }

  /// Set when the host stayed unreachable (its remaining cases stay pending).
  std::string unreachable;
  /// Set when the agent marks its VM unusable after an unclean restoration (the
  /// next case must not inherit the mess); its remaining cases stay pending.
  std::string unusable;

  void run() {
    try {
      results::Db db(opt_.db_path, results::Db::Mode::ReadWrite);
      db_ = &db;
      agent::ClientOptions co;
      co.request_timeout = std::chrono::milliseconds(opt_.request_timeout_ms);
      client_ = std::make_unique<agent::AgentClient>(agent::AgentClient::from_token_file(guest_.url, guest_.token_file, pool::client_options(guest_, co)));
      for (const auto* k : cases_) {
        for (;;) {
          const auto p = case_progress(*db_, k->case_id);
          if (p.state == "completed" || p.state == "lost") break;  // outcomes: never rerun (PROTOCOL.md)
          if (p.inflight) {  // an interrupted runner's attempt: take it over, never start another
            ++takeovers_;
            takeover(*k);
            continue;
          }
          if (p.runs_since_mark >= 1 + c_.max_infra_retries) break;  // left infra_failed
          // A guest that gets a fresh boot before each case needs no wait (the boot is the remedy).
          if (!fresh_) {
            // One GET /v1/health per case: the wait's answer also carries the unclean mark and
            // the boot id (formerly asked for again right after it answered).
            std::map<std::string, nlohmann::json> health;
            const auto still = wait_for_agents({guest_}, opt_.host_wait, opt_.out, &health);
            if (!still.empty()) {
              unreachable = still.front();
              prog_.note(guest_.name, unreachable + "; its remaining cases stay pending (no attempt spent)");
              db_ = nullptr;
              return;
            }
            const auto answer = health.find(guest_.name);
            if (const auto why = answer != health.end() ? unclean_mark(answer->second) : unclean_mark(); !why.empty()) {
              unusable = guest_.name + " (" + guest_.url + "): " + why;
              set_unusable_mark(*db_, guest_.name, why);
              prog_.note(guest_.name, "VM unusable: " + why + "; its remaining cases stay pending (no attempt spent)");
              db_ = nullptr;
              return;
            }
            set_unusable_mark(*db_, guest_.name, "");
          }
          ++attempts_;
          attempt(*k, p.last_attempt + 1);
        }
      }
    } catch (const std::exception& e) {
      // Host-level problem (token file unreadable, DB error): its cases stay as they are.
      prog_.note(guest_.name, std::string("worker stopped: ") + e.what());
    }
    db_ = nullptr;
  }

 private:
  static std::int64_t now() { return unix_now_ns(); }

  /// The agent's unclean-restoration mark (GET /v1/health "unclean"), as a sentence; ""
  /// when the VM is usable or the agent predates the mark.
  std::string unclean_mark() {
    try {
      return unclean_mark(client_->health());
    } catch (const agent::AgentError&) {
      return "";  // not answering now: the attempt itself will tell
    }
  }

  /// The same, read from a GET /v1/health answer `h` already received.
  std::string unclean_mark(const nlohmann::json& h) {
    last_boot_id_ = boot_id_of(h);
    return agent::UncleanMark::reason_in_health(h);
  }

  static std::string boot_id_of(const nlohmann::json& health) {
    return health.contains("boot_id") && health["boot_id"].is_string() ? health["boot_id"].get<std::string>() : "";
  }

  /// The guest's boot id now (GET /v1/health boot_id); "" when the agent does not say.
  std::string boot_id() {
    try {
      return boot_id_of(client_->health());
    } catch (const agent::AgentError&) {
      return "";
    }
  }

  /// What the engine can tell of a guest whose case vanished (docs/PROTOCOL.md: evidence for
  /// the operator; lost vs infra_failed is decided by the phase seen, not by this).
  void put_guest_evidence(AttemptRecord& a) {
    const pool::Liveness l = instance_.liveness();
    std::string tail = instance_.diagnose(4096);
    if (l == pool::Liveness::Unknown && tail.empty()) return;  // the engine can tell nothing of this guest
    if (!a.detail.is_object()) a.detail = nlohmann::json::object();
    a.detail["guest"] = {{"liveness", pool::to_string(l)}, {"console_tail", std::move(tail)}};
  }

  /// What polling saw of the case (PROTOCOL.md: the last phase decides lost vs infra_failed).
  struct Seen {
    std::string phase;                 ///< last phase reported (setup..restoration); "" = never
    std::int64_t last_seen_unix_ns = 0;
    std::int64_t submitted_unix_ns = 0;  ///< wall clock of the submission (the original one after a takeover)
  };

  static bool pressure_started(const std::string& phase) {
    return phase == "pressure" || phase == "recovery" || phase == "restoration";
  }

  /// The attempt's detail_json with what polling saw (other keys kept).
  static void put_seen(AttemptRecord& a, const Seen& s) {
    if (!a.detail.is_object()) a.detail = nlohmann::json::object();
    a.detail["phase"] = s.phase.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.phase);
    a.detail["last_seen_unix_ns"] = s.last_seen_unix_ns ? nlohmann::json(s.last_seen_unix_ns) : nlohmann::json(nullptr);
  }

  void fail(AttemptRecord& a, const std::string& msg) {
    a.ended_unix_ns = now();
    record_infra_failure(*db_, a, msg);
    const auto p = case_progress(*db_, a.case_id);
    prog_.finish(guest_.name, a.case_id, "infra_failed", msg, p.runs_since_mark >= 1 + c_.max_infra_retries);
  }

  /// The case vanished after submission (agent or guest lost, case unknown, cancelled,
  /// timed out, no bundle). PROTOCOL.md: lost once the pressure phase started; before it,
  /// infra_failed (rerun). Phase never seen (assumption): lost when the time since
  /// submission exceeds warmup + the executor's start lead (case/SPEC.md: 3 s).
  void vanished(const ScheduledCase& k, AttemptRecord& a, const Seen& seen, const std::string& msg) {
    put_seen(a, seen);
    put_guest_evidence(a);
    bool lost = pressure_started(seen.phase);
    std::string why = msg;
    if (seen.phase.empty()) {
      const auto since_s = (now() - seen.submitted_unix_ns) / 1'000'000'000LL;
      lost = since_s > c_.warmup_s + kStartLeadS;
      why += lost ? " (phase never seen; " : " (phase never seen; only ";
      why += std::to_string(since_s) + " s since submission, warmup + start lead = " +
             std::to_string(c_.warmup_s + kStartLeadS) + " s)";
    }
    if (!lost) return fail(a, why);
    a.ended_unix_ns = now();
    record_lost(*db_, k, c_.name, a,
                LostCase{seen.phase, seen.last_seen_unix_ns, why, qual_.source_commit, qual_.source_dirty,
                         ran_on_});
    prog_.finish(guest_.name, a.case_id, "lost", why, true);
  }

  void attempt(const ScheduledCase& k, int n) {
    AttemptRecord a{k.case_id, n, guest_.name + " " + guest_.url, now(), 0, nullptr};
    const std::string id = agent_case_id(k.case_id, n, db_tag(*db_));
    a.detail = {{"agent_case_id", id}, {"runner_pid", ::getpid()}, {"submitted", false},
                {"phase", nullptr},    {"last_seen_unix_ns", nullptr}};
    begin_attempt(*db_, a);  // in flight from here on: a killed runner leaves this row (takeover)
    prog_.start(guest_.name, k.case_id, n);
    nlohmann::json spec = k.spec;
    spec["case_id"] = id;
    Seen seen;
    // 1. Does the agent already know this case id? Adopt it: its result was never imported,
    //    so importing it now is neither a loss nor a rerun.
    bool adopt = false;
    try {
      client_->status(id);
      adopt = true;
      prog_.note(guest_.name, "adopting " + id + " already known to the agent");
    } catch (const agent::CaseNotFound&) {
      // not on the agent: submit it (adopt stays false)
    } catch (const agent::AgentError& e) {
      if (!fresh_) return fail(a, e.what());
    }
    if (!adopt) {
      if (fresh_) {
        // A fresh guest for the case, through the engine (with the case's variant boot).
        prog_.phase(guest_.name, "reboot");
        pool::BootRequest r = boot_request(k.spec);
        r.log_dir = (fs::absolute(opt_.db_path).parent_path() / ".consoles" /
                     (k.case_id + ".a" + std::to_string(n))).string();
        const std::int64_t t0 = now();
        try {
          const auto b = instance_.fresh_boot(r);
          a.detail["boot"] = {{"seconds", static_cast<double>(now() - t0) / 1e9},
                              {"boot_to_ready_s", b.boot_to_ready_s},
                              {"accelerator", b.accelerator}};
          if (!b.note.empty()) prog_.note(guest_.name, b.note);
          if (const auto id = boot_id(); !id.empty()) a.detail["boot_id"] = id;
          update_inflight(*db_, a);
        } catch (const pool::BootError& e) {
          // The guest never came up: nothing of the case ran. An infra failure before the
          // case (rerun while retries last), never a lost case; the console says why.
          a.detail["boot"] = {{"error", e.what()},
                              {"console_tail", e.console_tail()},
                              {"seconds", static_cast<double>(now() - t0) / 1e9}};
          return fail(a, std::string("fresh boot before the case failed: ") + e.what());
        }
      } else if (agent_reboot_) {
        // A reused real VM: a fresh kernel through its agent before the case (HOSTS.md).
        prog_.phase(guest_.name, "reboot");
        const std::int64_t t0 = now();
        try {
          const auto [before, after] = client_->reboot_and_wait(std::chrono::seconds(guest_.reboot_timeout_s));
          a.detail["reboot"] = {{"boot_id_before", before},
                                {"boot_id_after", after},
                                {"seconds", static_cast<double>(now() - t0) / 1e9}};
          if (!after.empty()) a.detail["boot_id"] = after;
          update_inflight(*db_, a);
        } catch (const agent::AgentError& e) {
          a.detail["reboot"] = {{"error", e.what()}, {"seconds", static_cast<double>(now() - t0) / 1e9}};
          return fail(a, std::string("reboot before the case: ") + e.what());
        }
      } else if (!last_boot_id_.empty()) {
        a.detail["boot_id"] = last_boot_id_;  // the boot the reused guest runs this case on
      }
    }
    seen.submitted_unix_ns = now();
    a.detail["submitted"] = true;  // from here the agent may have the case
    a.detail["submitted_unix_ns"] = seen.submitted_unix_ns;
    update_inflight(*db_, a);
    if (!adopt)
      if (auto err = submit_or_adopt(spec, id)) return fail(a, *err);
    follow(k, a, id, seen);
  }

  /// Takes over the in-flight attempt an interrupted runner left (runner.hpp "Takeover").
  void takeover(const ScheduledCase& k) {
    auto r = inflight_attempt(*db_, k.case_id);
    if (!r) return;
    AttemptRecord a = *r;
    a.host = guest_.name + " " + guest_.url;
    nlohmann::json d = a.detail.is_object() ? a.detail : nlohmann::json::object();
    const std::string id = d.contains("agent_case_id") && d["agent_case_id"].is_string()
                               ? d["agent_case_id"].get<std::string>()
                               : agent_case_id(k.case_id, a.attempt, db_tag(*db_));
    const std::int64_t t = now();
    d["runner_interrupted"] = true;
    if (!d.contains("takeovers") || !d["takeovers"].is_array()) d["takeovers"] = nlohmann::json::array();
    d["takeovers"].push_back({{"took_over_unix_ns", t},
                              {"runner_pid", ::getpid()},
                              {"interrupted_runner_pid", d.contains("runner_pid") ? d["runner_pid"] : nlohmann::json()},
                              {"phase_seen_before", d.contains("phase") ? d["phase"] : nlohmann::json()},
                              {"last_seen_unix_ns", d.contains("last_seen_unix_ns") ? d["last_seen_unix_ns"]
                                                                                    : nlohmann::json()}});
    d["runner_pid"] = ::getpid();
    a.detail = d;
    a.kind = "adopted";
    update_inflight(*db_, a);
    Seen seen;
    if (d.contains("phase") && d["phase"].is_string()) seen.phase = d["phase"].get<std::string>();
    if (d.contains("last_seen_unix_ns") && d["last_seen_unix_ns"].is_number_integer())
      seen.last_seen_unix_ns = d["last_seen_unix_ns"].get<std::int64_t>();
    seen.submitted_unix_ns = d.contains("submitted_unix_ns") && d["submitted_unix_ns"].is_number_integer()
                                 ? d["submitted_unix_ns"].get<std::int64_t>()
                                 : a.started_unix_ns;
    prog_.start(guest_.name, k.case_id, a.attempt, /*taken_over=*/true);
    prog_.note(guest_.name, "taking over " + id + " (attempt " + std::to_string(a.attempt) + ", started " +
                               std::to_string((t - a.started_unix_ns) / 1'000'000'000LL) +
                               " s ago) from an interrupted runner" +
                               (seen.phase.empty() ? "" : " (last phase seen: " + seen.phase + ")"));
    bool known = true;
    try {
      client_->status(id);
    } catch (const agent::CaseNotFound&) {
      known = false;
    } catch (const agent::AgentError&) {
      // not answering now: follow() waits for it (lost-agent grace) like any running case
    }
    if (!known && (!d.value("submitted", false) || seen.phase.empty())) {
      // The runner died before the case reached the agent, or before any phase of it was
      // seen, and the agent does not know it: nothing of the treatment was observed, and
      // the time since submission includes the time the runner was dead, so the
      // phase-never-seen rule cannot apply. Infra failure, rerun, not a spent retry (ours).
      a.kind = "interrupted";
      put_seen(a, seen);
      return fail(a, std::string("the runner was interrupted ") +
                         (d.value("submitted", false) ? "before it saw any phase of the case, and the agent does not "
                                                        "know it"
                                                      : "before the case was submitted") +
                         "; taken over and run again (not counted against max_infra_retries)");
    }
    if (!known)
      return vanished(k, a, seen, "taken over after the runner was interrupted: the agent no longer knows the case "
                                  "(guest restarted?)");
    follow(k, a, id, seen);
  }

  /// The case's own deadline (PROTOCOL.md "A silent agent"): submission + start lead +
  /// phases + restoration timeout + SilenceRules::deadline_margin_s, unix ns.
  std::int64_t case_deadline_unix_ns(const Seen& seen) const {
    const std::int64_t s = kStartLeadS + c_.warmup_s + c_.pressure_s + c_.recovery_s + c_.restoration_timeout_s +
                           opt_.silence.deadline_margin_s;
    return seen.submitted_unix_ns + s * 1'000'000'000LL;
  }

  /// One silence of the agent while a case runs, and what was learnt during it (stored in
  /// detail_json.silence for the operator and the lost rule).
  struct Silence {
    std::optional<std::chrono::steady_clock::time_point> since;  ///< open episode (steady clock)
    std::int64_t since_unix_ns = 0;
    std::string last_liveness;  ///< last engine answer recorded in the open episode
  };

  /// Appends `id` to detail_json.silence.boot_ids_seen when it is new there.
  static void note_boot_id(AttemptRecord& a, const std::string& id) {
    if (id.empty()) return;
    auto& ids = a.detail["silence"]["boot_ids_seen"];
    if (!ids.is_array()) ids = nlohmann::json::array();
    for (const auto& x : ids)
      if (x == id) return;
    ids.push_back(id);
  }

  /// The open silence episode of detail_json.silence.episodes (created by open_silence).
  static nlohmann::json& open_episode(AttemptRecord& a) { return a.detail["silence"]["episodes"].back(); }

  /// Opens an episode that began when the first unanswered request was sent (`steady`, `unix_ns`).
  void open_silence(AttemptRecord& a, Silence& s, const Seen& seen, const std::string& error,
                    std::chrono::steady_clock::time_point steady, std::int64_t unix_ns) {
    s.since = steady;
    s.since_unix_ns = unix_ns;
    s.last_liveness.clear();
    auto& sj = a.detail["silence"];
    if (!sj.is_object()) sj = nlohmann::json::object();
    if (!sj.contains("episodes")) sj["episodes"] = nlohmann::json::array();
    sj["deadline_unix_ns"] = case_deadline_unix_ns(seen);
    sj["episodes"].push_back({{"start_unix_ns", s.since_unix_ns},
                              {"end_unix_ns", nullptr},
                              {"seconds", nullptr},
                              {"phase", seen.phase.empty() ? nlohmann::json(nullptr) : nlohmann::json(seen.phase)},
                              {"first_error", error},
                              {"liveness", nlohmann::json::array()}});
    prog_.note(guest_.name, "agent silent (" + error + "); last phase seen: " +
                                (seen.phase.empty() ? std::string("none") : seen.phase));
    update_inflight(*db_, a);
  }

  void close_silence(AttemptRecord& a, Silence& s) {
    auto& e = open_episode(a);
    const std::int64_t t = now();
    e["end_unix_ns"] = t;
    e["seconds"] = static_cast<double>(t - s.since_unix_ns) / 1e9;
    prog_.note(guest_.name, "agent answers again after " + std::to_string((t - s.since_unix_ns) / 1'000'000LL) +
                                " ms of silence");
    s.since.reset();
  }

  /// Asks the engine whether the guest still runs, recording each new answer in the open
  /// episode. True when it says Gone.
  bool guest_gone(AttemptRecord& a, Silence& s) {
    const std::string l = pool::to_string(instance_.liveness());
    if (l != s.last_liveness) {
      open_episode(a)["liveness"].push_back({{"t_unix_ns", now()}, {"answer", l}});
      s.last_liveness = l;
      update_inflight(*db_, a);
    }
    return l == pool::to_string(pool::Liveness::Gone);
  }

  /// Polls the submitted (or taken over) case until it finishes, then imports its bundle
  /// with the attempts row in one transaction; or records it lost / infra_failed.
  /// A silent agent (docs/PROTOCOL.md "A silent agent"): before the pressure phase, a
  /// silence longer than SilenceRules::before_pressure means the case vanished; from the
  /// pressure phase on the runner keeps asking until the case's own deadline, and the case
  /// is lost only when the engine says the guest is gone, the boot id changed, or that
  /// deadline passed.
  void follow(const ScheduledCase& k, AttemptRecord& a, const std::string& id, Seen& seen) {
    const auto timeout_ns = static_cast<std::int64_t>(c_.case_timeout_s) * 1'000'000'000LL;
    const auto grace = std::max(opt_.silence.before_pressure, std::chrono::milliseconds(c_.poll_interval_ms) * 10);
    if (!a.detail.is_object()) a.detail = nlohmann::json::object();
    // The boot the case runs on: the one recorded before submission, else the agent's now.
    std::string boot = a.detail.contains("boot_id") && a.detail["boot_id"].is_string()
                           ? a.detail["boot_id"].get<std::string>()
                           : boot_id();
    if (!boot.empty() && !a.detail.contains("boot_id")) a.detail["boot_id"] = boot;
    Silence silence;
    agent::CaseStatus st;
    // After the first answer, each request asks the agent to hold its answer until the
    // case's state or phase changes (runner.status_wait_ms), so the agent is asked about once
    // per phase instead of every poll interval. An answer that comes sooner without a change
    // (an agent that does not wait) is followed by the rest of the poll interval.
    const std::chrono::milliseconds hold(c_.status_wait_ms);
    bool answered = false;
    for (;;) {
      const auto asked = std::chrono::steady_clock::now();
      const std::int64_t asked_unix_ns = now();
      const agent::CaseStatus seen_st = st;
      // Plain requests while the agent is silent: its first answer then ends the silence at once.
      const auto held = answered && !silence.since ? hold : std::chrono::milliseconds(0);
      bool changed = true;
      try {
        st = held.count() > 0 ? client_->wait_status(id, seen_st, held) : client_->status(id);
        changed = !answered || st.state != seen_st.state || st.phase != seen_st.phase;
        answered = true;
        seen.last_seen_unix_ns = now();
        if (silence.since) {
          close_silence(a, silence);
          // Did the guest reboot while the agent was silent? A new boot id means the case's
          // kernel is gone, whatever the agent says of the case now.
          const std::string b = boot_id();
          note_boot_id(a, boot);
          note_boot_id(a, b);
          update_inflight(*db_, a);
          if (!boot.empty() && !b.empty() && b != boot)
            return vanished(k, a, seen, "the guest rebooted while its agent was silent (boot id " + boot + " -> " + b + ")");
          if (boot.empty()) boot = b;
        }
        if (!st.phase.empty() && st.phase != "done" && st.phase != seen.phase) {
          seen.phase = st.phase;
          put_seen(a, seen);
          update_inflight(*db_, a);  // a takeover after a kill knows the phase reached
        }
        if (!st.phase.empty()) prog_.phase(guest_.name, st.phase);
        if (st.finished()) break;
      } catch (const agent::CaseNotFound& e) {
        if (silence.since) close_silence(a, silence);
        return vanished(k, a, seen, std::string("agent no longer knows the case (guest restarted?): ") + e.what());
      } catch (const agent::AgentError& e) {
        // A held request's answer was due at the latest `held` after it was sent: the
        // silence starts there (or now, if sooner), never while the agent was entitled to wait.
        if (!silence.since) {
          const auto due = std::min(std::chrono::steady_clock::now() - asked,
                                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(held));
          open_silence(a, silence, seen, e.what(), asked + due,
                       asked_unix_ns + std::chrono::duration_cast<std::chrono::nanoseconds>(due).count());
        }
        const auto silent_ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - *silence.since);
        if (!pressure_started(seen.phase)) {
          if (silent_ms > grace)
            return vanished(k, a, seen,
                            std::string("agent lost: silent for ") + std::to_string(silent_ms.count()) +
                                " ms before the pressure phase was seen: " + e.what());
        } else if (guest_gone(a, silence)) {
          return vanished(k, a, seen,
                          "the engine says the guest is gone (liveness) after " + std::to_string(silent_ms.count()) +
                              " ms of agent silence: " + e.what());
        } else if (now() > case_deadline_unix_ns(seen)) {
          return vanished(k, a, seen,
                          "agent silent for " + std::to_string(silent_ms.count()) +
                              " ms and the case's deadline passed (start lead + phases + restoration timeout + " +
                              std::to_string(opt_.silence.deadline_margin_s) + " s margin): " + e.what());
        }
      }
      if (now() - seen.submitted_unix_ns > timeout_ns) {
        try {
          client_->cancel(id);
        } catch (const std::exception&) {
          // best effort: the timeout is judged below whatever the cancel did; the guest is booted afresh for the next case
        }
        return vanished(k, a, seen,
                        "case timed out after " + std::to_string(c_.case_timeout_s) + " s (runner.case_timeout_s)");
      }
      if (!changed || silence.since)
        std::this_thread::sleep_until(asked + std::chrono::milliseconds(c_.poll_interval_ms));
    }
    put_seen(a, seen);
    if (st.state == "cancelled") return vanished(k, a, seen, "agent reports the case cancelled");
    // 3. Bundle -> one transaction (rows + schedule.state + attempts row).
    const fs::path dir = fs::absolute(opt_.db_path).parent_path() / ".bundles";
    fs::create_directories(dir);
    const fs::path bundle = dir / (k.case_id + ".a" + std::to_string(a.attempt) + ".db");
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
      status = import_attempt(*db_, bundle.string(), a, ran_on_, id);
    } catch (const std::exception& e) {
      return fail(a, std::string("bundle import failed (kept at ") + bundle.string() + "): " + e.what());
    }
    std::error_code ec;
    fs::remove(bundle, ec);
    // A lost bundle (the executor's own failure after the pressure phase started) is an
    // outcome like a completed one: final, never rerun (PROTOCOL.md).
    const bool outcome = status == "completed" || status == "lost";
    prog_.finish(guest_.name, k.case_id, status, status == "completed" ? "" : st.error,
                 outcome || case_progress(*db_, k.case_id).runs_since_mark >= 1 + c_.max_infra_retries);
  }

  /// POSTs the spec and makes sure an accepted case is never lost (a POST whose
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
    const auto grace = std::max(opt_.silence.before_pressure, poll * 10);
    bool noted_busy = false;
    for (;;) {
      try {
        client_->submit(spec);
        return std::nullopt;
      } catch (const agent::AgentConflict& e) {
        try {
          client_->status(id);
          prog_.note(guest_.name, "agent already runs " + id + ": adopting it");
          return std::nullopt;
        } catch (const agent::AgentError&) {
          // not adoptable: the conflict is reported below as an infrastructure failure
        }
        if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(c_.case_timeout_s))
          return std::string("agent stayed busy with another case for ") + std::to_string(c_.case_timeout_s) +
                 " s (runner.case_timeout_s): " + e.what();
        if (!noted_busy) prog_.note(guest_.name, std::string("agent busy, waiting: ") + e.what());
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
            prog_.note(guest_.name, "POST reply lost (" + post_error + "); the agent has " + id + ": adopting it");
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
  pool::Instance& instance_;  ///< this guest as its engine gives it (fresh boot, liveness, console)
  const pool::Guest guest_;   ///< its address
  std::string last_boot_id_;  ///< boot id of the last health answer (reused guests)
  RanOn ran_on_;        ///< where its cases run (cases.accelerator, host_uri, overcommitted, engine_kind)
  bool fresh_ = false;  ///< a fresh boot through the pool before each case
  bool agent_reboot_ = false;  ///< a reboot through the agent before each case
  std::vector<const ScheduledCase*> cases_;
  Progress& prog_;
  std::atomic<int>& attempts_;
  std::atomic<int>& takeovers_;
  results::Db* db_ = nullptr;
  std::unique_ptr<agent::AgentClient> client_;
  VmQualification qual_;  ///< this VM's qualification before scheduling (source of a lost case)
};

}  // namespace

namespace {

/// A pilot or confirmatory campaign whose guests run under TCG: said loudly at the start
/// (the study's numbers are latencies; under emulation every one is inflated).
void warn_if_study_under_tcg(const Campaign& c, const std::vector<pool::Guest>& guests, std::FILE* out) {
  if (c.kind != "confirmatory" && c.kind != "pilot") return;
  std::vector<std::string> tcg;
  for (const auto& g : guests)
    if (g.accelerator == "tcg") tcg.push_back(g.name);
  if (tcg.empty()) return;
  std::string names;
  for (const auto& n : tcg) names += (names.empty() ? "" : ", ") + n;
  std::fprintf(out,
               "\n*** WARNING: this %s campaign runs %zu of its %zu guest(s) (%s) under TCG, software emulation "
               "without KVM. ***\n*** Every latency, reclaim duration and stall is inflated, and guests sharing "
               "the host's cores add steal: its timings are not evidence about the study. ***\n*** Run it on KVM or "
               "real VMs (--hosts FILE, harness/vm/HOSTS.md; or another engine, harness/pool/README.md). ***\n\n",
               c.kind.c_str(), tcg.size(), guests.size(), names.c_str());
}

}  // namespace

RunSummary run_campaign(const Campaign& c, const RunOptions& opt) {
  // The engine first: its capacity is judged before anything is stored or booted.
  const auto pool = pool::open_pool(c.engine, open_context(c, opt.hosts_file));
  const auto capacity = judge(c, *pool);
  std::fputs(capacity.table.c_str(), opt.out);
  if (!capacity.unreachable.empty()) {  // `harness plan` may skip a host that does not answer; a run may not
    std::string hosts;
    for (const auto& u : capacity.unreachable) hosts += "\n  " + u;
    throw pool::PoolError("capacity cannot be judged: host(s) not answering; nothing stored or booted:" + hosts);
  }
  if (!capacity.ok) throw pool::CapacityError(capacity.refusal());
  Schedule planned = plan(c);
  Schedule s;
  const NewDbFiles new_db(opt.db_path);  // removed again when the guests' kernel refuses the run
  {
    results::Db db(opt.db_path, results::Db::Mode::Create);
    if (!has_plan(db)) store_plan(db, c, planned);
    s = load_verified_plan(db);  // throws ScheduleTampered
    if (s.sha256_hex != planned.sha256_hex)
      throw ScheduleTampered(opt.db_path + ": the stored schedule (sha256 " + s.sha256_hex +
                             ") is not the plan of " + c.file + " (sha256 " + planned.sha256_hex +
                             "): the campaign changed after planning; use a new DB");
  }
  const RunnerLock lock(opt.db_path);  // from here on no other runner drives this DB or its guests
  RunSummary sum;
  sum.planned = static_cast<int>(s.cases.size());
  int done_before = 0, skipped_now = 0;  // skipped_now: not run on purpose (--baseline-db), not counted as done
  {
    results::Db db(opt.db_path, results::Db::Mode::ReadWrite);
    for (const auto& [id, p] : load_progress(db)) {
      if (opt.skip_cases.count(id)) ++skipped_now;
      else if ((p.state == "completed" || p.state == "lost") && !p.inflight) ++done_before;
    }
  }
  pool::AcquireContext ac;
  ac.campaign = c.name;
  ac.db_path = opt.db_path;
  ac.accelerator = opt.accelerator;
  ac.self_exe = opt.self_exe;
  ac.out = opt.out;
  ac.adopt_wait_s = std::min(opt.host_wait.total_s, 60);  // an adopted guest silent for a minute is booted again
  std::vector<std::unique_ptr<pool::Instance>> instances;
  std::vector<pool::Guest> guests;  // their addresses
  bool acquired = false;
  if (done_before + skipped_now < sum.planned) {
    acquired = true;
    instances = pool->acquire(ac);
    guests = pool::addresses(instances);
    std::vector<std::string> not_booted;
    for (const auto& g : instances)
      if (!g->fresh_boot_per_case()) not_booted.push_back(g->name());
    if (const auto why = variant_boot_refusal(c, not_booted); !why.empty()) {
      pool->release();
      throw kernel_refusal(why, new_db, opt.db_path);
    }
    sum.engine = pool->describe();
    std::fprintf(opt.out, "%s\n", sum.engine.c_str());
    warn_if_study_under_tcg(c, guests, opt.out);
    std::fflush(opt.out);
  } else {
    pool->release_orphans(ac);  // an earlier runner was killed after its last import
  }
  auto release = [&] {  // only what this run booted or adopted (others may share the machine)
    if (acquired) pool->release();
    acquired = false;
  };
  Preflight pf;
  if (!guests.empty()) {
    // Health first (unreachable hosts are waited for, never charged), then qualification
    // before scheduling (study; PROTOCOL.md), after the guests are up.
    const auto still = wait_for_agents(guests, opt.host_wait, opt.out);
    if (!still.empty()) {
      std::string why;
      for (const auto& x : still) why += "  " + x + "\n";
      release();
      throw PreflightRefused("health check before scheduling: host(s) not answering, no case submitted and no "
                             "attempt spent (run the same command again once they answer):\n" + why);
    }
    pf = fleet_preflight(c, guests);
    if (opt.preflight_out) *opt.preflight_out = pf.table;
    if (!pf.ok) {
      release();
      throw PreflightRefused("qualification before scheduling refused the run (no case submitted):\n" + pf.table);
    }
    if (!c.dose_from_pilot.empty()) {  // the guests run the pilot's kernel, or it is declared (pilot_match.hpp)
      std::vector<std::pair<std::string, std::string>> releases;
      for (const auto& v : pf.vms) {
        const auto it = v.values.find("kernel_release");
        releases.emplace_back(v.vm, it == v.values.end() ? std::string("(missing)") : it->second);
      }
      if (const auto why = pilot_kernel_refusal(c, load_stored_pilot(c.dose_from_pilot).kernel_releases, releases);
          !why.empty()) {
        release();
        throw kernel_refusal(why, new_db, opt.db_path);
      }
    }
  }
  const bool tty = opt.progress_tty < 0 ? isatty(fileno(opt.out)) != 0 : opt.progress_tty == 1;
  std::atomic<int> attempts{0}, takeovers{0};
  {
    Progress prog(sum.planned - skipped_now, done_before, tty, opt.out);
    std::vector<std::unique_ptr<Worker>> workers;
    std::vector<std::thread> threads;
    for (const auto& vm : c.vms) {
      std::vector<const ScheduledCase*> mine;
      for (const auto& k : s.cases)
        if (k.vm == vm && !opt.skip_cases.count(k.case_id)) mine.push_back(&k);  // ordinal order = per-VM order
      pool::Instance* g = nullptr;
      for (const auto& x : instances)
        if (x->name() == vm) g = x.get();
      if (!g) continue;  // nothing left to run
      VmQualification q;
      for (const auto& x : pf.vms)
        if (x.vm == vm) q = x;
      workers.push_back(std::make_unique<Worker>(c, opt, *g, pool->kind(), capacity.overcommitted(g->guest().host),
                                                 std::move(mine), prog, attempts, takeovers, q));
    }
    for (auto& w : workers) threads.emplace_back([&w] { w->run(); });
    for (auto& t : threads) t.join();
    prog.stop();
    for (const auto& w : workers) {
      if (!w->unreachable.empty()) sum.unreachable.push_back(w->unreachable);
      if (!w->unusable.empty()) sum.unusable.push_back(w->unusable);
    }
  }
  release();
  results::Db db(opt.db_path, results::Db::Mode::ReadWrite);
  for (const auto& [id, p] : load_progress(db)) {
    if (p.state == "completed") ++sum.completed;
    else if (p.state == "lost") ++sum.lost;
    else if (opt.skip_cases.count(id)) ++sum.skipped;
    else if (p.state == "infra_failed" && p.runs_since_mark >= 1 + c.max_infra_retries) ++sum.infra_failed;
    else ++sum.pending;
  }
  sum.attempts_this_run = attempts.load();
  sum.taken_over = takeovers.load();
  return sum;
}

}  // namespace harness::campaign
