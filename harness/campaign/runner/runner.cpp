// The campaign runner (see runner.hpp).
#include "harness/campaign/runner/runner.hpp"
#include "harness/agent/client/client.hpp"
#include "harness/campaign/store/new_db_files.hpp"

#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/plan/pilot_match.hpp"
#include "harness/campaign/runner/preflight.hpp"
#include "harness/campaign/runner/progress.hpp"
#include "harness/campaign/runner/runner_lock.hpp"
#include "harness/campaign/runner/worker.hpp"
#include "harness/campaign/plan/schedule.hpp"
#include "harness/pool/agent_wait.hpp"
#include "harness/pool/capacity.hpp"
#include "harness/pool/engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <thread>

namespace harness::campaign {

namespace {
/// "variants.NAME" of the first variant that boots (kernel image or cmdline), "" when none does.
std::string booting_variant(const Campaign& c) {
  for (const auto& v : c.variants)
    if (!v.kernel_image_dir.empty() || !v.cmdline.empty()) return "variants." + v.name;
  return "";
}

/// Passed unless a variant boots and `not_booted` (guests the engine does not boot per case) is
/// not empty: such a guest would run every case on the kernel it already runs, so the variants
/// would compare that kernel with itself (the Problem says so).
Checked check_variant_boot(const Campaign& c, const std::vector<std::string>& not_booted) {
  const std::string v = booting_variant(c);
  if (v.empty() || not_booted.empty()) return {};
  std::string names;
  for (const auto& n : not_booted) names += (names.empty() ? "" : ", ") + n;
  return problem(c.file + ": " + v + " boots a kernel image or cmdline, but the engine does not boot " + names +
                 " for each case (a hosts entry without `local: true`): every case there would run on the kernel the "
                 "VM already runs, and the variants would compare it with itself. Run this campaign on an engine "
                 "that boots its guests (provider.kind " +
                 pool::engine_kinds_where(
                     [](const pool::Capabilities& k) { return k.fresh_boot_per_case && k.boot_variants; }) +
                 "), or drop the kernel/cmdline of the variants");
}

/// A refusal for the kernel the guests run or would run, before any case: the campaign DB goes
/// again when this run created it (it holds only the plan; the same command plans it again).
PreflightRefused kernel_refusal(const std::string& why, const NewDbFiles& new_db, const std::string& db_path) {
  if (!new_db.discard()) return PreflightRefused(why);
  return PreflightRefused(why + " (" + db_path + " removed: this run created it and ran no case)");
}

pool::OpenContext open_context(const Campaign& c, const std::string& hosts_file, const std::string& db_path) {
  pool::OpenContext o;
  o.campaign_file = c.file;
  o.campaign = c.name;
  o.db_path = db_path;
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

EnginePreview preview_engine(const Campaign& c, const std::string& hosts_file, const std::string& db_path) {
  const auto p = pool::open_pool(c.engine, open_context(c, hosts_file, db_path));
  EnginePreview e;
  e.kind = p->kind();
  e.describe = p->describe();
  e.capacity = judge(c, *p);
  for (const auto& h : e.capacity.hosts) e.costs.push_back(pool::read_host_costs(e.kind, h.capacity.host));
  const auto* engine = pool::find_engine(e.kind);
  if (engine) e.capabilities = engine->capabilities;
  e.fresh_boot_per_case = e.capabilities.fresh_boot_per_case && c.engine && c.engine->fresh_guest_per_case;
  const auto hosts = p->preview_guests(c.vms);  // the hosts engine's --hosts FILE; nothing from other engines
  e.reboot_between_cases = hosts.reboot_between_cases;
  if (const auto why = check_variant_boot(c, hosts.not_booted); !why) throw pool::PoolError(why.error().message);
  return e;
}

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

namespace {

/// The engine's capacity, printed; throws when a host cannot be judged or the guests do not fit.
pool::CapacityVerdict judged_capacity(const Campaign& c, pool::Pool& p, std::FILE* out) {
  auto capacity = judge(c, p);
  std::fputs(capacity.table.c_str(), out);
  if (!capacity.unreachable.empty()) {  // `harness plan` may skip a host that does not answer; a run may not
    std::string hosts;
    for (const auto& u : capacity.unreachable) hosts += "\n  " + u;
    throw pool::PoolError("capacity cannot be judged: host(s) not answering; nothing stored or booted:" + hosts);
  }
  if (!capacity.ok) throw pool::CapacityError(capacity.refusal());
  return capacity;
}

/// The DB's stored schedule, planned the first time; throws ScheduleTampered when it is not `c`'s plan.
Schedule stored_plan(const Campaign& c, const std::string& db_path) {
  const Schedule planned = plan(c);
  results::Db db(db_path, results::Db::Mode::Create);
  if (!has_plan(db)) store_plan(db, c, planned);
  Schedule s = load_verified_plan(db);  // throws ScheduleTampered
  if (s.sha256_hex != planned.sha256_hex)
    throw ScheduleTampered(db_path + ": the stored schedule (sha256 " + s.sha256_hex + ") is not the plan of " +
                           c.file + " (sha256 " + planned.sha256_hex +
                           "): the campaign changed after planning; use a new DB");
  return s;
}

/// Cases already decided before this run, and cases not run on purpose (--baseline-db).
struct DoneBefore {
  int done = 0;
  int skipped = 0;
};

DoneBefore done_before(const RunOptions& opt) {
  DoneBefore d;
  results::Db db(opt.db_path, results::Db::Mode::ReadWrite);
  for (const auto& [id, p] : load_progress(db)) {
    if (opt.skip_cases.count(id)) ++d.skipped;
    else if ((p.state == "completed" || p.state == "lost") && !p.inflight) ++d.done;
  }
  return d;
}

/// What this run booted or adopted, released once (others may share the machine).
struct Held {
  pool::Pool& pool;
  bool acquired = false;
  void release() {
    if (acquired) pool.release();
    acquired = false;
  }
};

/// Acquires the guests (adopt or boot) when cases are left, else releases an earlier runner's
/// orphans; refuses a variant that boots a kernel on guests the engine does not boot per case.
std::vector<std::unique_ptr<pool::Instance>> acquire_guests(const Campaign& c, const RunOptions& opt, Held& held,
                                                            bool cases_left, const NewDbFiles& new_db, RunSummary& sum) {
  pool::AcquireContext ac;
  ac.campaign = c.name;
  ac.db_path = opt.db_path;
  ac.accelerator = opt.accelerator;
  ac.self_exe = opt.self_exe;
  ac.out = opt.out;
  ac.adopt_wait_s = std::min(opt.host_wait.total_s, 60);  // an adopted guest silent for a minute is booted again
  if (!cases_left) {
    held.pool.release_orphans(ac);  // an earlier runner was killed after its last import
    return {};
  }
  held.acquired = true;
  auto instances = held.pool.acquire(ac);
  std::vector<std::string> not_booted;
  for (const auto& g : instances)
    if (!g->fresh_boot_per_case()) not_booted.push_back(g->name());
  if (const auto why = check_variant_boot(c, not_booted); !why) {
    held.release();
    throw kernel_refusal(why.error().message, new_db, opt.db_path);
  }
  sum.engine = held.pool.describe();
  std::fprintf(opt.out, "%s\n", sum.engine.c_str());
  warn_if_study_under_tcg(c, pool::addresses(instances), opt.out);
  std::fflush(opt.out);
  return instances;
}

/// Each guest's token file is readable, not empty and private (the client's rule, client.hpp
/// from_token_file), checked before any wait: a local mistake is said now, not later as an agent
/// that does not answer. Passed when every one is; else the Problem, one line per guest.
Checked check_token_files(const std::vector<pool::Guest>& guests) {
  std::string why;
  for (const auto& g : guests) {
    try {
      (void)agent::AgentClient::from_token_file(g.url, g.token_file, pool::client_options(g));
    } catch (const std::exception& e) {
      why += "  " + g.name + ": " + e.what() + "\n";  // the file, and what is wrong with it
    }
  }
  if (why.empty()) return {};
  return problem(std::move(why));
}

/// Health first (unreachable hosts are waited for, never charged), then qualification before
/// scheduling (study; PROTOCOL.md), then the pilot's kernel; throws PreflightRefused (guests released).
Preflight qualify_fleet(const Campaign& c, const RunOptions& opt, const std::vector<pool::Guest>& guests, Held& held,
                        const NewDbFiles& new_db) {
  if (const auto why = check_token_files(guests); !why) {
    held.release();
    throw PreflightRefused("token file(s) unusable, no case submitted and no attempt spent:\n" + why.error().message);
  }
  const auto still = wait_for_agents(guests, opt.host_wait, opt.out);
  if (!still.empty()) {
    std::string why;
    for (const auto& x : still) why += "  " + x + "\n";
    held.release();
    throw PreflightRefused("health check before scheduling: host(s) not answering, no case submitted and no "
                           "attempt spent (run the same command again once they answer):\n" + why);
  }
  Preflight pf = fleet_preflight(c, guests);
  if (opt.preflight_out) *opt.preflight_out = pf.table;
  if (!pf.ok) {
    held.release();
    throw PreflightRefused("qualification before scheduling refused the run (no case submitted):\n" + pf.table);
  }
  if (c.dose_from_pilot.empty()) return pf;
  // The guests run the pilot's kernel, or it is declared (pilot_match.hpp).
  std::vector<std::pair<std::string, std::string>> releases;
  for (const auto& v : pf.vms) {
    const auto it = v.values.find("kernel_release");
    releases.emplace_back(v.vm, it == v.values.end() ? std::string("(missing)") : it->second);
  }
  if (const auto why = check_pilot_kernel(c, load_stored_pilot(c.dose_from_pilot).kernel_releases, releases); !why) {
    held.release();
    throw kernel_refusal(why.error().message, new_db, opt.db_path);
  }
  return pf;
}

/// One worker thread per guest over its cases (schedule order), until each is done.
void run_workers(const Campaign& c, const RunOptions& opt, const std::string& engine_kind, const Schedule& s,
                 const std::vector<std::unique_ptr<pool::Instance>>& guests, const Preflight& pf, const pool::CapacityVerdict& capacity,
                 const DoneBefore& before, RunSummary& sum) {
  const bool tty = opt.progress_tty < 0 ? isatty(fileno(opt.out)) != 0 : opt.progress_tty == 1;
  std::atomic<int> attempts{0}, takeovers{0};
  Progress prog(sum.planned - before.skipped, before.done, tty, opt.out);
  std::vector<std::unique_ptr<Worker>> workers;
  for (const auto& vm : c.vms) {
    const auto g = std::find_if(guests.begin(), guests.end(), [&](const auto& x) { return x->name() == vm; });
    if (g == guests.end()) continue;  // nothing left to run
    std::vector<const ScheduledCase*> mine;
    for (const auto& k : s.cases)
      if (k.vm == vm && !opt.skip_cases.count(k.case_id)) mine.push_back(&k);  // ordinal order = per-VM order
    VmQualification q;
    for (const auto& x : pf.vms)
      if (x.vm == vm) q = x;
    workers.push_back(std::make_unique<Worker>(c, opt, **g, engine_kind, capacity.overcommitted((*g)->guest().host),
                                               std::move(mine), prog, attempts, takeovers, q));
  }
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&w] { w->run(); });
  for (auto& t : threads) t.join();
  prog.stop();
  for (const auto& w : workers) {
    if (!w->unreachable.empty()) sum.unreachable.push_back(w->unreachable);
    if (!w->unusable.empty()) sum.unusable.push_back(w->unusable);
  }
  sum.attempts_this_run = attempts.load();
  sum.taken_over = takeovers.load();
}

/// The DB's cases by state after the run.
void count_outcomes(const Campaign& c, const RunOptions& opt, RunSummary& sum) {
  results::Db db(opt.db_path, results::Db::Mode::ReadWrite);
  for (const auto& [id, p] : load_progress(db)) {
    if (p.state == "completed") ++sum.completed;
    else if (p.state == "lost") ++sum.lost;
    else if (opt.skip_cases.count(id)) ++sum.skipped;
    else if (p.state == "infra_failed" && p.runs_since_mark >= 1 + c.max_infra_retries) ++sum.infra_failed;
    else ++sum.pending;
  }
}

}  // namespace

RunSummary run_campaign(const Campaign& c, const RunOptions& opt) {
  // The engine first: its capacity is judged before anything is stored or booted.
  const auto pool = pool::open_pool(c.engine, open_context(c, opt.hosts_file, opt.db_path));
  const auto capacity = judged_capacity(c, *pool, opt.out);
  const NewDbFiles new_db(opt.db_path);  // removed again when the guests' kernel refuses the run
  const Schedule s = stored_plan(c, opt.db_path);
  const RunnerLock lock(opt.db_path);  // from here on no other runner drives this DB or its guests
  RunSummary sum;
  sum.planned = static_cast<int>(s.cases.size());
  const DoneBefore before = done_before(opt);
  Held held{*pool};
  const auto guests = acquire_guests(c, opt, held, before.done + before.skipped < sum.planned, new_db, sum);
  Preflight pf;
  if (!guests.empty()) pf = qualify_fleet(c, opt, pool::addresses(guests), held, new_db);
  run_workers(c, opt, pool->kind(), s, guests, pf, capacity, before, sum);
  held.release();
  count_outcomes(c, opt, sum);
  return sum;
}

}  // namespace harness::campaign
