// The case executor (docs/DESIGN.md "The case"; issue 4). See executor.hpp for the timeline.
#include "harness/case/executor.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "canaries/trace_file.hpp"
#include "harness/case/backend.hpp"
#include "harness/build_info.hpp"
#include "harness/case/bundle.hpp"
#include "harness/case/case_cgroups.hpp"
#include "harness/case/case_clock.hpp"
#include "harness/case/confounds.hpp"
#include "harness/case/controller.hpp"
#include "harness/case/environment.hpp"
#include "harness/case/load_summary.hpp"
#include "harness/case/process.hpp"
#include "harness/case/qualification_options.hpp"
#include "harness/case/reclaim_action.hpp"
#include "harness/case/restoration_check.hpp"
#include "harness/case/telemetry.hpp"
#include "harness/case/variant.hpp"
#include "harness/case/vm_state.hpp"
#include "harness/case/workloads.hpp"
#include "harness/kernel/errors.hpp"
#include "harness/kernel/procfs.hpp"
#include "harness/kernel/swap.hpp"
#include "qualify/qualify.hpp"
#include "results/db.hpp"

namespace hcase {

namespace {

namespace fs = std::filesystem;
constexpr std::int64_t kSec = 1'000'000'000;

std::atomic<int> g_cancel{0};
extern "C" void on_cancel_signal(int sig) { g_cancel.store(sig); }

/// Installs SIGTERM/SIGINT handlers (no SA_RESTART: sleeps return EINTR) for the case's
/// lifetime; restores the previous ones on destruction.
class CancelGuard {
 public:
  CancelGuard() {
    g_cancel.store(0);
    struct sigaction sa{};
    sa.sa_handler = on_cancel_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGTERM, &sa, &old_term_);
    ::sigaction(SIGINT, &sa, &old_int_);
  }
  ~CancelGuard() {
    ::sigaction(SIGTERM, &old_term_, nullptr);
    ::sigaction(SIGINT, &old_int_, nullptr);
  }

 private:
  struct sigaction old_term_{}, old_int_{};
};

std::int64_t unix_ns() {
  struct timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * kSec + ts.tv_nsec;
}

/// Absolute sleep on CLOCK_MONOTONIC; false when cancelled by a signal.
bool sleep_until(std::int64_t t_ns) {
  struct timespec ts{static_cast<time_t>(t_ns / kSec), static_cast<long>(t_ns % kSec)};
  for (;;) {
    if (g_cancel.load()) return false;
    int rc = ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    if (rc == 0) return !g_cancel.load();
    if (rc != EINTR) return !g_cancel.load();
  }
}

std::string read_text(const std::string& path, std::size_t max_bytes = 1 << 20) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string s(max_bytes, '\0');
  in.read(s.data(), static_cast<std::streamsize>(max_bytes));
  s.resize(static_cast<std::size_t>(in.gcount()));
  return s;
}

struct Child {
  std::string name;  ///< pressure-gen | canary-compute | canary-sqlite
  pid_t pid = -1;
  std::int64_t spawned_ns = 0;
  std::optional<std::int64_t> term_ns;  ///< when SIGTERM was sent
  std::optional<ExitInfo> exit;
  std::string stdout_path, stderr_path;
  nlohmann::json to_json() const {
    nlohmann::json j{{"pid", pid}, {"spawned_ns", spawned_ns}};
    j["term_ns"] = term_ns ? nlohmann::json(*term_ns) : nlohmann::json();
    if (exit) {
      j["exited"] = exit->exited;
      j["exit_code"] = exit->exited ? nlohmann::json(exit->exit_code) : nlohmann::json();
      j["signal"] = exit->signal ? nlohmann::json(exit->signal) : nlohmann::json();
      j["reaped_ns"] = exit->reaped_ns;
    } else {
      j["exited"] = nullptr;
      j["note"] = "not reaped";
    }
    return j;
  }
};

nlohmann::json steps_json(const std::vector<StepRecord>& steps) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : steps) a.push_back(s.to_json());
  return a;
}

struct OomCounts {
  std::optional<std::int64_t> bg_oom, bg_oom_kill, fg_oom, fg_oom_kill;
};

class CaseRun {
 public:
  CaseRun(const CaseSpec& spec, const ExecutorOptions& opt)
      : spec_(spec), opt_(opt), fs_(opt.root), cg_(fs_, spec.cgroups), backend_(fs_, spec.backend, spec.configuration) {}

  /// run_inner() with a last-resort guard: an unexpected exception still restores the
  /// host and writes an infra_failed bundle.
  ExecutorResult run() {
    try {
      return run_inner();
    } catch (const std::exception& e) {
      fail(fmt::format("executor error: {}", e.what()));
      if (created_ && !b_.restoration) {
        try {
          restore();
        } catch (const std::exception& e2) {
          outcome_["restoration_error"] = e2.what();
        }
      }
      return finish("infra_failed", *infra_error_);
    }
  }

 private:
  ExecutorResult run_inner();
  ExecutorResult finish(const std::string& status, const std::string& error);
  void fail(const std::string& error) { infra_error_ = error; }
  void restore();
  void report_phase(const char* phase);
  OomCounts read_oom() const;
  void spawn(const std::string& name, const std::vector<std::string>& argv, const kernel::Cgroup& cg);
  Child* child(const std::string& name);
  void read_traces();
  std::string work(const std::string& file) const { return (fs::path(work_dir_) / file).string(); }
  std::string reported_phase_;

  const CaseSpec& spec_;
  const ExecutorOptions& opt_;
  kernel::Fs fs_;
  CaseCgroups cg_;
  Backend backend_;
  CaseBundle b_;
  nlohmann::json outcome_ = nlohmann::json::object();
  std::string work_dir_, bin_dir_;
  std::int64_t page_size_ = 4096;
  std::vector<StepRecord> leftover_steps_, setup_steps_, restore_steps_;
  std::vector<Child> children_;
  std::optional<std::string> infra_error_;
  bool created_ = false;  ///< something of this case exists on the host
  bool workload_started_ = false;
  OomCounts oom_start_;
  std::optional<ReclaimAction> reclaim_;
  std::optional<StepRecord> backend_on_;
  // harness_self: the executor's (and a parent agent's) CPU at the start of the case.
  std::int64_t self_start_ns_ = 0;
  SelfUsage self_start_, agent_start_;
  // The same over the measured schedule (first tick .. loop end): what competes with
  // the canaries and pressure-gen on the vCPU.
  std::optional<std::int64_t> sched_start_ns_, sched_end_ns_;
  SelfUsage sched_start_, sched_end_, agent_sched_start_, agent_sched_end_;
  pid_t agent_pid_ = 0;  ///< the parent when it is `harness agent`, else 0
  std::optional<std::string> clocksource_start_;
  void record_self_start();
  void record_confounds();
  // Between cases on a reused VM (vm_state.hpp): settle, read, baseline.
  void record_vm_start();
  std::optional<VmBaseline> vm_baseline_;
  std::optional<VariantApplier> variant_;  ///< A/B variant (spec.variant), applied before qualification
};

/// The parent process when it is a `harness agent` (its /proc/<ppid>/cmdline has the
/// words "harness"-something and "agent"), else 0.
pid_t agent_parent(const kernel::Fs& fs) {
  const pid_t pp = ::getppid();
  auto r = fs.try_read("proc/" + std::to_string(pp) + "/cmdline");
  if (!r.ok()) return 0;
  bool harness = false, agent = false;
  std::size_t i = 0;
  while (i < r.text.size()) {
    std::size_t z = r.text.find('\0', i);
    if (z == std::string::npos) z = r.text.size();
    const std::string w = r.text.substr(i, z - i);
    if (w == "agent") agent = true;
    if (fs::path(w).filename().string().rfind("harness", 0) == 0) harness = true;
    i = z + 1;
  }
  return harness && agent ? pp : 0;
}

std::optional<std::string> read_clocksource_opt(const kernel::Fs& fs) {
  try {
    return kernel::read_clocksource(fs);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// outcome_json.vm_state.start and the VM's first-case baseline (vm_state.hpp).
void CaseRun::record_vm_start() {
  std::vector<StepRecord> steps;
  settle_vm(fs_, steps);
  const VmState st = read_vm_state(fs_);
  vm_baseline_ = read_vm_baseline(fs_);
  bool established = false;
  if (!vm_baseline_ && st.mem_available_kib) {
    vm_baseline_ = VmBaseline{*st.mem_available_kib, spec_.case_id, kernel::current_boot_id(fs_)};
    try {
      write_vm_baseline(fs_, *vm_baseline_);
      established = true;
    } catch (const kernel::Error& e) {
      steps.push_back({"write VM baseline", 0, EIO, e.what()});
    }
  }
  auto& j = outcome_["vm_state"];
  j["start"] = st.to_json();
  j["start"]["steps"] = steps_json(steps);
  j["baseline"] = vm_baseline_ ? nlohmann::json{{"mem_available_kib", vm_baseline_->mem_available_kib},
                                                {"case_id", vm_baseline_->case_id},
                                                {"established_by_this_case", established}}
                               : nlohmann::json();
}

void CaseRun::record_self_start() {
  self_start_ns_ = kernel::monotonic_ns();
  self_start_ = read_usage(fs_, 0);
  agent_pid_ = agent_parent(fs_);
  if (agent_pid_) agent_start_ = read_usage(fs_, agent_pid_);
  clocksource_start_ = read_clocksource_opt(fs_);
}

namespace {
/// CPU time of the calling thread, ns.
std::int64_t thread_cpu_ns() {
  struct timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * kSec + ts.tv_nsec;
}
}  // namespace

// outcome_json.clocksource, .steal, .harness_self, .source (SPEC.md v2).
void CaseRun::record_confounds() {
  auto cs_end = read_clocksource_opt(fs_);
  auto opt_str = [](const std::optional<std::string>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  outcome_["clocksource"] = {{"start", opt_str(clocksource_start_)},
                             {"end", opt_str(cs_end)},
                             {"changed", clocksource_start_ && cs_end ? nlohmann::json(*clocksource_start_ != *cs_end)
                                                                      : nlohmann::json()}};
  outcome_["steal"] = steal_summary(b_.telemetry);
  const std::int64_t wall = kernel::monotonic_ns() - self_start_ns_;
  const SelfUsage self_end = read_usage(fs_, 0);
  auto delta = [](const std::optional<std::int64_t>& a, const std::optional<std::int64_t>& z) {
    return a && z ? std::optional<std::int64_t>(*z - *a) : std::nullopt;
  };
  auto opt = [](const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  const auto exec_cpu = delta(self_start_.cpu_ns, self_end.cpu_ns);
  nlohmann::json hs{{"wall_ns", wall},
                    {"executor", {{"cpu_ns", opt(exec_cpu)}, {"peak_rss_kib", opt(self_end.peak_rss_kib)}}},
                    {"reclaim_write_cpu_ns", nullptr}};
  std::optional<std::int64_t> agent_cpu;
  std::optional<std::int64_t> agent_rss;
  if (agent_pid_) {
    const SelfUsage a = read_usage(fs_, agent_pid_);
    agent_cpu = delta(agent_start_.cpu_ns, a.cpu_ns);
    agent_rss = a.peak_rss_kib;
    hs["agent"] = {{"pid", agent_pid_}, {"cpu_ns", opt(agent_cpu)}, {"peak_rss_kib", opt(agent_rss)}};
  } else {
    hs["agent"] = nullptr;
  }
  // The memory.reclaim write runs in the executor's thread: its kernel reclaim work is
  // counted as the executor's system time. harness_self excludes it (reported apart).
  std::int64_t write_cpu = 0;
  if (outcome_.contains("reclaim") && outcome_["reclaim"].is_object() &&
      outcome_["reclaim"].contains("write_cpu_ns") && outcome_["reclaim"]["write_cpu_ns"].is_number_integer()) {
    write_cpu = outcome_["reclaim"]["write_cpu_ns"].get<std::int64_t>();
    hs["reclaim_write_cpu_ns"] = write_cpu;
  }
  if (exec_cpu) {
    const std::int64_t cpu = *exec_cpu - write_cpu + agent_cpu.value_or(0);
    hs["cpu_ns"] = cpu;
    const int vcpus = std::max(1, spec_.vm_vcpus);
    hs["vcpu_fraction"] = wall > 0 ? static_cast<double>(cpu) / (static_cast<double>(wall) * vcpus) : 0.0;
  } else {
    hs["cpu_ns"] = nullptr;
    hs["vcpu_fraction"] = nullptr;
  }
  // Peak RSS: the larger process (executor or agent), and their sum.
  if (self_end.peak_rss_kib) {
    hs["peak_rss_kib"] = std::max(*self_end.peak_rss_kib, agent_rss.value_or(0));
    hs["peak_rss_sum_kib"] = *self_end.peak_rss_kib + agent_rss.value_or(0);
  } else {
    hs["peak_rss_kib"] = nullptr;
  }
  // Over the measured schedule (warmup..recovery ticks), without setup, qualification and
  // restoration (swapoff of a full zram runs in the executor's context: seconds of
  // system time that compete with nothing measured).
  if (sched_start_ns_ && sched_end_ns_ && sched_start_.cpu_ns && sched_end_.cpu_ns) {
    const std::int64_t w = *sched_end_ns_ - *sched_start_ns_;
    std::int64_t cpu = *sched_end_.cpu_ns - *sched_start_.cpu_ns - write_cpu;
    if (agent_pid_ && agent_sched_start_.cpu_ns && agent_sched_end_.cpu_ns)
      cpu += *agent_sched_end_.cpu_ns - *agent_sched_start_.cpu_ns;
    std::int64_t sample_cpu = 0;
    for (const auto& t : b_.telemetry)
      if (t.extra.contains("sample_cpu_ns")) sample_cpu += t.extra["sample_cpu_ns"].get<std::int64_t>();
    hs["schedule"] = {{"wall_ns", w},
                      {"cpu_ns", cpu},
                      {"telemetry_cpu_ns", sample_cpu},
                      {"vcpu_fraction", w > 0 ? static_cast<double>(cpu) / (static_cast<double>(w) * std::max(1, spec_.vm_vcpus)) : 0.0}};
  } else {
    hs["schedule"] = nullptr;
  }
  outcome_["harness_self"] = hs;
}

Child* CaseRun::child(const std::string& name) {
  for (auto& c : children_)
    if (c.name == name) return &c;
  return nullptr;
}

void CaseRun::spawn(const std::string& name, const std::vector<std::string>& argv, const kernel::Cgroup& cg) {
  Child c;
  c.name = name;
  c.stdout_path = work(name + ".stdout");
  c.stderr_path = work(name + ".stderr");
  c.pid = spawn_in_cgroup(cg, {argv, c.stdout_path, c.stderr_path});
  c.spawned_ns = kernel::monotonic_ns();
  children_.push_back(c);
  outcome_["argv"][name] = argv;
}

OomCounts CaseRun::read_oom() const {
  OomCounts o;
  auto cast = [](std::optional<std::uint64_t> v) {
    return v ? std::optional<std::int64_t>(static_cast<std::int64_t>(*v)) : std::nullopt;
  };
  try {
    auto e = cg_.bg().memory_events();
    o.bg_oom = cast(e.oom());
    o.bg_oom_kill = cast(e.oom_kill());
  } catch (const kernel::Error&) {
  }
  try {
    auto e = cg_.fg().memory_events();
    o.fg_oom = cast(e.oom());
    o.fg_oom_kill = cast(e.oom_kill());
  } catch (const kernel::Error&) {
  }
  return o;
}

ExecutorResult CaseRun::run_inner() {
  CancelGuard cancel_guard;
  record_self_start();
  b_.started_unix_ns = unix_ns();
  b_.case_id = spec_.case_id;
  b_.campaign = spec_.campaign;
  b_.vm = spec_.vm;
  b_.regime = spec_.regime;
  b_.repeat = spec_.repeat;
  b_.triplet_id = spec_.triplet_id;
  b_.configuration = to_string(spec_.configuration);
  b_.dose_bytes = spec_.dose_bytes;
  b_.attempt = opt_.attempt;
  b_.spec_json = spec_.raw.dump();
  page_size_ = page_size_bytes();
  b_.page_size_bytes = page_size_;
  b_.source_commit = harness::build::kSourceCommit;
  b_.source_dirty = harness::build::kSourceDirty ? 1 : 0;
  outcome_["source"] = {{"commit", harness::build::kSourceCommit}, {"dirty", harness::build::kSourceDirty}};

  // --- out dir (nothing on the host is touched before this works) -------------------
  try {
    fs::create_directories(opt_.out_dir);
    work_dir_ = (fs::path(opt_.out_dir) / (spec_.case_id + ".work")).string();
    fs::remove_all(work_dir_);
    fs::create_directories(work_dir_);
  } catch (const std::exception& e) {
    ExecutorResult r;
    r.status = "infra_failed";
    r.error = fmt::format("cannot create out dir {}: {}", opt_.out_dir, e.what());
    return r;
  }

  // --- environment ----------------------------------------------------------------
  const std::string accel = accelerator_from(fs_, opt_.accelerator);
  b_.accelerator = accel;
  auto env = collect_environment(fs_, accel);
  if (env.contains("kernel_release") && env["kernel_release"].is_string())
    b_.kernel_release = env["kernel_release"].get<std::string>();
  b_.environment_json = env.dump();
  outcome_["timing_claims_valid"] = accel == "kvm" || accel == "real";

  // --- workload binaries and inputs (checked before anything is created) -------------
  bin_dir_ = opt_.bin_dir.empty() ? fs::read_symlink("/proc/self/exe").parent_path().string() : opt_.bin_dir;
  for (const char* bin : {"pressure-gen", "canary-compute", "canary-sqlite"}) {
    auto p = fs::path(bin_dir_) / bin;
    if (::access(p.c_str(), X_OK) != 0)
      return finish("infra_failed", fmt::format("workload binary {} not executable: {}", p.string(), std::strerror(errno)));
  }
  if (::access(spec_.canaries.sqlite_db_path.c_str(), R_OK) != 0)
    return finish("infra_failed", fmt::format("canaries.sqlite_db_path {}: {} (build it with `canary-sqlite prepare`)",
                                              spec_.canaries.sqlite_db_path, std::strerror(errno)));

  // --- protect the executor from the OOM killer ---------------------------------------
  auto adj = kernel::write_oom_score_adj(fs_, -1000);
  if (!adj.ok()) return finish("infra_failed", "cannot set own oom_score_adj to -1000: " + adj.message());

  // --- leftovers of a crashed earlier case, then qualification -----------------------
  if (cg_.parent().exists()) {
    leftover_steps_.push_back(cg_.kill_all(10 * kSec));
    cg_.remove(leftover_steps_);
  }
  const auto leftovers = Backend::cleanup_leftovers(fs_, spec_.backend, leftover_steps_);
  outcome_["leftover_steps"] = steps_json(leftover_steps_);
  // The cause first (issue 16): a leftover device that cannot be released stops the case
  // here, before qualification and before any cgroup is created.
  if (!leftovers.released) return finish("infra_failed", leftovers.cause);
  if (!cg_.present().empty())
    return finish("infra_failed", fmt::format("leftover cgroup {} could not be removed", cg_.present().front()));
  record_vm_start();

  // --- A/B variant (SPEC.md "variant"): the right guest, then the knobs; before any
  //     cgroup of the case exists. finish() / restore() put the knobs back.
  if (spec_.variant) {
    variant_.emplace(fs_, *spec_.variant);
    const auto err = variant_->apply();
    outcome_["variant"] = variant_->to_json();
    if (err) return finish("infra_failed", *err);
  }

  try {
    cg_.enable_root_memory(setup_steps_);
  } catch (const std::exception& e) {
    outcome_["setup_steps"] = steps_json(setup_steps_);
    return finish("infra_failed", e.what());
  }
  if (opt_.skip_qualification) {
    b_.qualification_json = nlohmann::json{{"skipped", true}, {"note", "--skip-qualification (development only)"}}.dump();
    outcome_["qualification_skipped"] = true;
  } else {
    auto rep = qualify::run(case_qualification_options(spec_, opt_.root, opt_.out_dir, opt_.min_free_disk_bytes));
    b_.qualification_json = rep.to_json().dump();
    if (!rep.passed) {
      std::string why;
      for (const auto& r : rep.reasons()) why += (why.empty() ? "" : "; ") + r;
      return finish("infra_failed", "host not qualified: " + why);
    }
  }

  // --- setup --------------------------------------------------------------------------
  try {
    created_ = true;
    cg_.create(setup_steps_);
    backend_.prepare(setup_steps_);
  } catch (const std::exception& e) {
    outcome_["setup_steps"] = steps_json(setup_steps_);
    fail(fmt::format("setup: {}", e.what()));
    restore();
    return finish("infra_failed", *infra_error_);
  }
  outcome_["setup_steps"] = steps_json(setup_steps_);
  outcome_["zram_device"] = backend_.zram_path();
  outcome_["zram"] = backend_.zram_json();
  oom_start_ = read_oom();

  // --- schedule -----------------------------------------------------------------------
  const CaseClock clk = CaseClock::from(spec_, kernel::monotonic_ns() + opt_.start_lead_ns);
  const std::int64_t t0 = clk.origin_ns, ps = clk.pressure_start_ns, pe = clk.pressure_end_ns, end = clk.end_ns;
  const std::int64_t total_s = spec_.phases.warmup_s + spec_.phases.pressure_s + spec_.phases.recovery_s;
  outcome_["schedule"] = {{"origin_ns", t0},
                          {"pressure_start_ns", ps},
                          {"pressure_end_ns", pe},
                          {"end_ns", end},
                          {"telemetry_offset_ns", clk.tick_offset_ns},
                          {"sqlite_origin_ns", clk.sqlite_origin_ns()}};

  const Workloads wl(spec_, bin_dir_, work_dir_);
  try {
    spawn("canary-compute", wl.canary_compute(clk.compute_origin_ns(), total_s), cg_.fg());
    spawn("canary-sqlite", wl.canary_sqlite(clk.sqlite_origin_ns(), total_s), cg_.fg());
    workload_started_ = true;
  } catch (const std::exception& e) {
    fail(fmt::format("starting canaries: {}", e.what()));
    restore();
    return finish("infra_failed", *infra_error_);
  }

  // --- warmup -> pressure -> recovery: telemetry + controller on absolute ticks -------
  TelemetrySampler sampler(fs_, cg_.bg(), cg_.fg(), backend_.zram(), backend_.zram_path(), backend_.swapfile_path());
  reclaim_.emplace(cg_.bg(), opt_.reclaim_settle_ns);
  Controller controller(spec_.trigger, spec_.configuration, ps, pe,
                        [&](std::int64_t t_ns, std::vector<ControllerEvent>& ev) {
                          if (spec_.configuration == Configuration::DelayedActivation) {
                            auto step = backend_.activate();
                            backend_on_ = step;
                            ev.push_back({kernel::monotonic_ns(), "backend_on", std::nullopt, std::nullopt,
                                          std::nullopt, std::nullopt,
                                          nlohmann::json{{"trigger_t_ns", t_ns}, {"step", step.to_json()}}});
                          } else if (spec_.configuration == Configuration::BoundedReclaim) {
                            ev.push_back({kernel::monotonic_ns(), "reclaim_start", std::nullopt, std::nullopt,
                                          std::nullopt, std::nullopt,
                                          nlohmann::json{{"trigger_t_ns", t_ns}, {"requested_bytes", *spec_.dose_bytes}}});
                            // Concurrent limit reclaim: bg pgsteal over the 3 windows up to
                            // this tick (its sample is already in b_.telemetry).
                            reclaim_->start(*spec_.dose_bytes, pgsteal_rate_before(b_.telemetry, 3));
                          }
                        });
  bool pg_started = false, pg_termed = false;
  std::int64_t k = 0, missed = 0, missed_total = 0;
  std::optional<std::int64_t> cancelled_at;
  for (;;) {
    const std::int64_t tick = clk.tick(k);
    if (tick > end) break;
    if (!sleep_until(tick)) {
      cancelled_at = kernel::monotonic_ns();
      break;
    }
    const char* phase = clk.phase_of(tick);
    report_phase(phase);
    if (!sched_start_ns_) {
      sched_start_ns_ = kernel::monotonic_ns();
      sched_start_ = read_usage(fs_, 0);
      if (agent_pid_) agent_sched_start_ = read_usage(fs_, agent_pid_);
    }
    const std::int64_t cpu_before = thread_cpu_ns();
    b_.telemetry.push_back(sampler.sample(tick, phase));
    auto& s = b_.telemetry.back();
    s.extra["sample_cpu_ns"] = thread_cpu_ns() - cpu_before;
    if (missed) s.extra["missed_ticks"] = missed;
    missed = 0;
    controller.on_sample(s, b_.events);
    if (!pg_started && tick >= ps && tick < pe) {
      pg_started = true;
      try {
        spawn("pressure-gen", wl.pressure_gen(spec_.phases.pressure_s + 5), cg_.bg());
      } catch (const std::exception& e) {
        fail(fmt::format("starting pressure-gen: {}", e.what()));
        cancelled_at = kernel::monotonic_ns();
        break;
      }
    }
    if (pg_started && !pg_termed && tick >= pe) {
      pg_termed = true;
      if (auto* c = child("pressure-gen")) {
        ::kill(c->pid, SIGTERM);
        c->term_ns = kernel::monotonic_ns();
      }
    }
    const std::int64_t now = kernel::monotonic_ns();
    std::int64_t next = k + 1;
    while (clk.tick(next) < now && clk.tick(next) <= end) ++next, ++missed, ++missed_total;
    k = next;
  }
  outcome_["missed_ticks"] = missed_total;
  if (sched_start_ns_) {
    sched_end_ns_ = kernel::monotonic_ns();
    sched_end_ = read_usage(fs_, 0);
    if (agent_pid_) agent_sched_end_ = read_usage(fs_, agent_pid_);
  }
  if (g_cancel.load()) {
    outcome_["cancelled_by_signal"] = g_cancel.load();
    if (!infra_error_) fail(fmt::format("cancelled by signal {}", g_cancel.load()));
  }

  // Phase records: scheduled boundaries; a cancelled run ends its current phase early.
  auto add_phase = [&](const char* name, std::int64_t a, std::int64_t z) {
    if (cancelled_at && *cancelled_at < a) return;
    b_.phases.push_back({name, a, cancelled_at && *cancelled_at < z ? *cancelled_at : z});
  };
  add_phase("warmup", t0, ps);
  add_phase("pressure", ps, pe);
  add_phase("recovery", pe, end);

  // --- canaries finish on their own (duration = W+P+R); pressure-gen was TERMed --------
  const std::int64_t grace_end = (cancelled_at ? kernel::monotonic_ns() : end) + opt_.canary_exit_grace_ns;
  for (auto& c : children_) {
    if (cancelled_at && !c.term_ns) {
      ::kill(c.pid, SIGTERM);
      c.term_ns = kernel::monotonic_ns();
    }
    if (!c.exit) c.exit = wait_for_exit(c.pid, std::max<std::int64_t>(0, grace_end - kernel::monotonic_ns()));
  }
  if (auto rec = reclaim_->join()) {
    b_.events.push_back({rec->end_ns, "reclaim_end", std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                         rec->to_json(page_size_)});
    ReclaimRow row;
    static_cast<ReclaimReadings&>(row) = *rec;
    row.achieved_bytes = rec->achieved_bytes(page_size_);
    row.achieved_counter = rec->counter;
    row.concurrent_estimate_bytes = rec->concurrent_estimate_bytes(page_size_);
    row.achieved_conservative_bytes = rec->achieved_conservative_bytes(page_size_);
    row.achieved_settled_bytes = rec->achieved_settled_bytes(page_size_);
    b_.reclaims.push_back(row);
    outcome_["reclaim"] = rec->to_json(page_size_);
  } else {
    outcome_["reclaim"] = nullptr;
  }
  std::stable_sort(b_.events.begin(), b_.events.end(),
                   [](const ControllerEvent& a, const ControllerEvent& z) { return a.t_ns < z.t_ns; });

  const auto& pred = controller.predicate();
  outcome_["trigger"] = {{"fired", pred.fired()},
                         {"kind", spec_.configuration == Configuration::StaticZram ? "would_trigger" : "trigger"}};
  if (pred.fired()) {
    outcome_["trigger"]["t_ns"] = *pred.fired_at_ns();
    outcome_["trigger"]["since_pressure_start_ns"] = *pred.fired_at_ns() - ps;
  }
  if (backend_on_) outcome_["backend_on"] = backend_on_->to_json();

  restore();
  read_traces();
  {
    nlohmann::json report;
    try {
      auto text = read_text(work("pressure-gen.stdout"));
      if (!text.empty()) report = nlohmann::json::parse(text);
    } catch (const std::exception&) {
    }
    outcome_["load"] = load_summary(spec_, report, b_.events);
  }
  if (infra_error_) return finish("infra_failed", *infra_error_);
  return finish("completed", "");
}

// The agent reports a running case's phase from <out>/phase (harness/agent/API.md):
// one word, replaced atomically (write + rename) when the phase changes.
void CaseRun::report_phase(const char* phase) {
  if (phase == reported_phase_) return;
  reported_phase_ = phase;
  const auto dst = fs::path(opt_.out_dir) / "phase";
  const auto tmp = fs::path(opt_.out_dir) / "phase.tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << phase << "\n";
    if (!f) return;  // progress display only: never fails a case
  }
  std::error_code ec;
  fs::rename(tmp, dst, ec);
}

void CaseRun::restore() {
  report_phase("restoration");
  RestorationRow row;
  row.start_ns = kernel::monotonic_ns();
  const std::int64_t budget_end = row.start_ns + static_cast<std::int64_t>(spec_.restoration_timeout_s) * kSec;
  // OOM counters before anything is killed (cgroup.kill is not an OOM kill).
  if (created_) {
    auto o = read_oom();
    auto delta = [](std::optional<std::int64_t> a, std::optional<std::int64_t> z) {
      return a && z ? nlohmann::json(*z - *a) : nlohmann::json();
    };
    outcome_["oom_kills"] = {{"bg", delta(oom_start_.bg_oom_kill, o.bg_oom_kill)},
                             {"fg", delta(oom_start_.fg_oom_kill, o.fg_oom_kill)}};
    outcome_["oom_events"] = {{"bg", delta(oom_start_.bg_oom, o.bg_oom)}, {"fg", delta(oom_start_.fg_oom, o.fg_oom)}};
  }
  // 1. stop processes: TERM, wait, then cgroup.kill.
  const auto t_stop = kernel::monotonic_ns();
  for (auto& c : children_)
    if (!c.exit) {
      ::kill(c.pid, SIGTERM);
      if (!c.term_ns) c.term_ns = kernel::monotonic_ns();
    }
  for (auto& c : children_)
    if (!c.exit) c.exit = wait_for_exit(c.pid, std::min<std::int64_t>(5 * kSec, std::max<std::int64_t>(0, budget_end - kernel::monotonic_ns())));
  restore_steps_.push_back({"stop processes (SIGTERM, wait)", kernel::monotonic_ns() - t_stop, 0, "ok"});
  if (cg_.parent().exists()) restore_steps_.push_back(cg_.kill_all(std::min<std::int64_t>(10 * kSec, budget_end - kernel::monotonic_ns())));
  for (auto& c : children_)
    if (!c.exit) c.exit = wait_for_exit(c.pid, 2 * kSec);
  // 2. swapoff and zram reset; 3. rmdir.
  backend_.teardown(restore_steps_);
  cg_.remove(restore_steps_);
  // 4. verify.
  RestorationObservation obs;
  try {
    obs.swaps = kernel::read_swaps(fs_);
  } catch (const kernel::Error& e) {
    restore_steps_.push_back({"read /proc/swaps", 0, EIO, e.what()});
    obs.swaps.push_back({"/proc/swaps unreadable", "unknown", 0, 1, 0});
  }
  obs.case_swap_paths = backend_.enabled_paths();
  obs.cgroups_present = cg_.present();
  obs.stray_pids = cg_.pids();
  for (const auto& c : children_)
    if (!c.exit && process_alive(c.pid)) obs.stray_pids.push_back(c.pid);
  if (const auto* z = backend_.zram()) {
    // A hot-added device is gone once released; a borrowed spare must read disksize 0.
    if (backend_.zram_origin() == kernel::ZramOrigin::HotAdd && z->exists()) obs.owned_zram_left = z->dev_path();
    if (z->exists()) {
      try {
        obs.zram_disksize_bytes = z->disksize_bytes();
      } catch (const kernel::Error& e) {
        restore_steps_.push_back({"read zram disksize", 0, EIO, e.what()});
      }
    }
  }
  outcome_["zram"] = backend_.zram_json();
  // The VM back to its baseline (vm_state.hpp): settle, read, judge.
  settle_vm(fs_, restore_steps_);
  const VmState vm_end = read_vm_state(fs_);
  outcome_["vm_state"]["end"] = vm_end.to_json();
  if (vm_baseline_) {
    const auto chk = check_vm_baseline(vm_end, *vm_baseline_);
    outcome_["vm_state"]["baseline_check"] = chk.to_json();
    obs.vm_baseline_problem = chk.problem;
  }
  if (variant_) {
    obs.variant_problems = variant_->restore();
    outcome_["variant"] = variant_->to_json();
  }
  auto verdict = verify_restoration(obs);
  row.end_ns = kernel::monotonic_ns();
  row.clean = verdict.clean;
  row.detail = {{"steps", steps_json(restore_steps_)},
                {"verdict", verdict.to_json()},
                {"budget_s", spec_.restoration_timeout_s},
                {"over_budget", row.end_ns > budget_end}};
  b_.restoration = row;
  b_.phases.push_back({"restoration", row.start_ns, row.end_ns});
  outcome_["restoration"] = verdict.to_json();
  nlohmann::json procs = nlohmann::json::object();
  for (const auto& c : children_) procs[c.name] = c.to_json();
  outcome_["processes"] = procs;
}

void CaseRun::read_traces() {
  nlohmann::json counts = nlohmann::json::object();
  for (const char* name : {"compute", "sqlite"}) {
    const std::string prog = std::string("canary-") + name;
    const Child* c = child(prog);
    if (!c) continue;
    const std::string path = work(prog + ".trace");
    try {
      // The final trace, else the journal a killed canary left (every request it finished;
      // docs/PROTOCOL.md: every case keeps its outcome).
      bool from_journal = false;
      std::string trace_error;
      canaries::TraceFile tf;
      try {
        tf = canaries::read_trace(path);
      } catch (const canaries::TraceError& e) {
        trace_error = e.what();
        tf = canaries::read_journal(canaries::journal_path(path));
        from_journal = true;
      }
      for (const auto& r : tf.records) {
        CanaryRequestRow row;
        row.canary = name;
        row.seq = static_cast<std::int64_t>(r.seq);
        row.scheduled_ns = r.scheduled_ns;
        row.wake_ns = r.wake_ns;
        if (r.completion_ns != 0) row.completion_ns = r.completion_ns;
        row.minflt = r.minflt;
        row.majflt = r.majflt;
        row.nvcsw = r.nvcsw;
        row.nivcsw = r.nivcsw;
        b_.requests.push_back(row);
      }
      counts[name] = {{"requests", tf.records.size()}, {"not_recorded", tf.header.not_recorded},
                      {"origin_ns", tf.header.origin_ns}, {"period_ns", tf.header.period_ns}};
      if (from_journal) {
        counts[name]["from_journal"] = true;  // the canary did not finish: a truncated trace
        counts[name]["trace_error"] = trace_error;
      }
    } catch (const std::exception& e) {
      counts[name] = {{"error", e.what()}};
      const auto& fg_kills = outcome_["oom_kills"]["fg"];
      bool oom_killed = fg_kills.is_number() && fg_kills.get<std::int64_t>() > 0;
      if (!oom_killed && !infra_error_)
        fail(fmt::format("{} left no readable trace ({}) and fg saw no OOM kill", prog, e.what()));
    }
  }
  outcome_["canary_requests"] = counts;
  for (const auto& c : children_) {
    auto out = read_text(c.stdout_path);
    if (!out.empty()) b_.artifacts.emplace_back(c.name + ".json", out);
    auto err = read_text(c.stderr_path, 64 << 10);
    if (!err.empty()) b_.artifacts.emplace_back(c.name + ".stderr", err);
  }
}

ExecutorResult CaseRun::finish(const std::string& status, const std::string& error) {
  ExecutorResult r;
  r.status = status;
  r.exit_code = status == "completed" ? 0 : 3;
  r.error = error;
  b_.status = status;
  if (!error.empty()) b_.error = error;
  if (!outcome_.contains("leftover_steps")) outcome_["leftover_steps"] = steps_json(leftover_steps_);
  if (variant_) {  // an exit before restore() (qualification failed): knobs back now
    variant_->restore();
    outcome_["variant"] = variant_->to_json();
  }
  outcome_["workload_started"] = workload_started_;
  record_confounds();
  b_.outcome_json = outcome_.dump();
  b_.ended_unix_ns = unix_ns();
  const std::string path = (fs::path(opt_.out_dir) / (spec_.case_id + ".db")).string();
  try {
    write_bundle(path, b_);
    r.bundle_path = path;
  } catch (const std::exception& e) {
    r.status = "infra_failed";
    r.exit_code = 3;
    r.error = (error.empty() ? "" : error + "; ") + "writing the bundle failed: " + e.what();
  }
  return r;
}

}  // namespace

ExecutorResult run_case(const CaseSpec& spec, const ExecutorOptions& opt) {
  try {
    CaseRun run(spec, opt);
    return run.run();
  } catch (const std::exception& e) {
    ExecutorResult r;
    r.status = "infra_failed";
    r.error = fmt::format("executor error: {}", e.what());
    return r;
  }
}

}  // namespace hcase
