// The case executor: the sequence of one case (executor.hpp). Each step is a call into the
// room that does it (harness/case/README.md): preconditions.hpp, case_cgroups.hpp and
// backend.hpp (setup), children.hpp (workloads), tick_loop.hpp with measured_schedule.hpp
// (the schedule), policy.hpp (the arm's policy), restoration.hpp, trace_import.hpp,
// harness_self.hpp; what they measure goes into case_outcome.hpp and bundle.hpp.
#include "harness/case/run/executor.hpp"

#include <time.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "harness/build_info.hpp"
#include "harness/case/control/policy.hpp"
#include "harness/case/run/cancel_signal.hpp"
#include "harness/case/run/case_outcome.hpp"
#include "harness/case/host/environment.hpp"
#include "harness/case/run/measured_schedule.hpp"
#include "harness/case/run/phase_file.hpp"
#include "harness/case/host/preconditions.hpp"
#include "harness/kernel/wall_clock.hpp"

namespace harness::case_ {

namespace {

namespace fs = std::filesystem;

using harness::kernel::unix_now_ns;

}  // namespace

ExecutorResult classify(const std::optional<std::string>& failure, bool pressure_reported) {
  if (!failure) return {0, "completed", "", ""};
  if (pressure_reported) return {4, "lost", "", *failure};
  return {3, "infra_failed", "", *failure};
}

namespace {

class CaseRun {
 public:
  CaseRun(const CaseSpec& spec, const ExecutorOptions& opt)
      : spec_(spec),
        opt_(opt),
        fs_(opt.root),
        work_dir_((fs::path(opt.out_dir) / (spec.case_id + ".work")).string()),
        action_(make_policy(spec)),
        cg_(fs_, spec.cgroups),
        backend_(fs_, spec.backend, action_->zram_at_start()),
        phase_(opt.out_dir),
        children_(work_dir_) {}

  /// run_inner() with a last-resort guard: an unexpected exception still restores the
  /// host and writes an infra_failed bundle.
  ExecutorResult run() {
    try {
      return run_inner();
    } catch (const std::exception& e) {
      error_ = fmt::format("executor error: {}", e.what());
      if (created_ && !b_.restoration) {
        try {
          restore();
        } catch (const std::exception& e2) {
          out_.restoration_error = e2.what();
        }
      }
      return finish();
    }
  }

 private:
  ExecutorResult run_inner();
  ExecutorResult run_schedule();
  void restore();
  ExecutorResult finish();
  /// CPU of every memory.reclaim write of the case, ns (the treatment's kernel work, done in an
  /// executor thread: harness_self subtracts it); null without a write. The study's single
  /// write keeps its ns figure; a policy that writes repeatedly (senpai, bounded-loop, rules)
  /// sums its reclaim_actions rows (us each).
  std::optional<std::int64_t> reclaim_write_cpu_ns() const;
  ExecutorResult fail(const std::string& why) {
    error_ = why;
    return finish();
  }
  void spawn_canary(const std::string& name, const std::vector<std::string>& argv) {
    const auto& c = children_.spawn(name, argv, cg_.fg());
    out_.argv[c.name] = c.argv;
  }

  const CaseSpec& spec_;
  const ExecutorOptions& opt_;
  harness::kernel::Fs fs_;
  std::string work_dir_, bin_dir_;
  std::unique_ptr<Policy> action_;
  CaseCgroups cg_;
  Backend backend_;
  PhaseFile phase_;
  Children children_;
  std::optional<SelfAccounting> self_;
  std::optional<VariantApplier> variant_;  ///< A/B variant (spec.variant), applied before qualification
  CaseBundle b_;
  CaseOutcome out_;
  std::int64_t page_size_ = 4096, telemetry_cpu_ns_ = 0;
  std::vector<StepRecord> setup_steps_, restore_steps_;
  std::optional<std::string> error_;  ///< the infra_failed reason; none = completed
  bool created_ = false;              ///< something of this case exists on the host
  OomCounts oom_start_;
};

ExecutorResult CaseRun::run_inner() {
  CancelGuard cancel_guard;
  self_.emplace(fs_);
  out_.clocksource.start = read_clocksource_or_none(fs_);
  b_.started_unix_ns = unix_now_ns();
  fill_case_row(b_, spec_, opt_.attempt);
  b_.page_size_bytes = page_size_ = page_size_bytes();
  out_.source = {harness::build::kSourceCommit, harness::build::kSourceDirty};
  try {  // nothing on the host is touched before the out dir works (no bundle without it)
    fs::create_directories(opt_.out_dir);
    fs::remove_all(work_dir_);
    fs::create_directories(work_dir_);
  } catch (const std::exception& e) {
    return {3, "infra_failed", "", fmt::format("cannot create out dir {}: {}", opt_.out_dir, e.what())};
  }
  const std::string accel = accelerator_from(fs_, opt_.accelerator);
  b_.accelerator = accel;
  const auto env = collect_environment(fs_, accel);
  if (env.contains("kernel_release") && env["kernel_release"].is_string())
    b_.kernel_release = env["kernel_release"].get<std::string>();
  b_.environment_json = env.dump();
  out_.timing_claims_valid = accel == "kvm" || accel == "real";

  bin_dir_ = opt_.bin_dir.empty() ? fs::read_symlink("/proc/self/exe").parent_path().string() : opt_.bin_dir;
  if (auto c = check_workload_inputs(bin_dir_, spec_); !c) return fail(c.error().message);
  if (auto c = protect_from_oom_killer(fs_); !c) return fail(c.error().message);
  if (auto c = clean_leftovers(fs_, cg_, spec_.backend, out_.leftover_steps); !c) return fail(c.error().message);
  out_.vm_state.emplace().start = record_vm_start(fs_, spec_.case_id);
  if (spec_.variant) {  // the right guest, then the knobs; before any cgroup of the case exists
    variant_.emplace(fs_, *spec_.variant);
    if (auto c = variant_->apply(); !c) return fail(c.error().message);
  }
  try {
    cg_.enable_root_memory(setup_steps_);
  } catch (const std::exception& e) {
    out_.setup_steps = setup_steps_;
    return fail(e.what());
  }
  const Qualification q = qualify_host(spec_, opt_);
  b_.qualification_json = q.report.dump();
  if (q.skipped) out_.qualification_skipped = true;
  if (q.failure) return fail(*q.failure);

  try {
    created_ = true;
    cg_.create(setup_steps_);
    backend_.prepare(setup_steps_);
  } catch (const std::exception& e) {
    out_.setup_steps = setup_steps_;
    error_ = fmt::format("setup: {}", e.what());
    restore();
    return finish();
  }
  out_.setup_steps = setup_steps_;
  out_.zram_device = backend_.zram_path();
  out_.zram = ZramOutcome{backend_.zram_record()};
  oom_start_ = cg_.oom_counts();
  return run_schedule();
}

ExecutorResult CaseRun::run_schedule() {
  const CaseClock clk = CaseClock::from(spec_, harness::kernel::monotonic_ns() + opt_.start_lead_ns);
  out_.schedule = clk;
  const std::int64_t total_s = spec_.phases.warmup_s + spec_.phases.pressure_s + spec_.phases.recovery_s;
  const Workloads wl(spec_, bin_dir_, work_dir_);
  try {
    spawn_canary("canary-compute", wl.canary_compute(clk.compute_origin_ns(), total_s));
    spawn_canary("canary-sqlite", wl.canary_sqlite(clk.sqlite_origin_ns(), total_s));
    out_.workload_started = true;
  } catch (const std::exception& e) {
    error_ = fmt::format("starting canaries: {}", e.what());
    restore();
    return finish();
  }

  // warmup -> pressure -> recovery: telemetry and the controller on absolute ticks.
  TelemetrySampler sampler(fs_, cg_.bg(), cg_.fg(), backend_.zram(), backend_.zram_path(),
                                 backend_.swapfile_path());
  ActionContext actx{spec_, backend_, cg_.bg(), b_.telemetry, page_size_, opt_.reclaim_settle_ns};
  const auto note = action_->no_action_note();
  Controller controller(
      spec_.trigger, clk.pressure_start_ns, clk.pressure_end_ns,
      [&](std::int64_t t_ns, std::vector<ControllerEvent>& ev) { action_->on_trigger(t_ns, actx, ev); }, note,
      [&](const TickInput& tick, std::vector<ControllerEvent>& ev) { action_->on_tick(tick, actx, ev); });
  MeasuredSchedule body(phase_, *self_, sampler, controller, children_, wl, spec_.phases.pressure_s + 5, cg_.bg(), b_,
                        out_);
  // Room for every tick's sample and window row before the first tick, so that no tick inside
  // the measured phases copies the earlier samples into a grown vector.
  const auto ticks = static_cast<std::size_t>(clk.first_tick_at_or_after(clk.end_ns + 1));  // ticks <= end
  b_.telemetry.reserve(b_.telemetry.size() + ticks);
  b_.events.reserve(b_.events.size() + ticks);
  MonotonicTickClock clock;
  const TickLoopResult loop = run_ticks(clk, clock, std::ref(body));
  self_->schedule_end();
  telemetry_cpu_ns_ = body.telemetry_cpu_ns();
  out_.missed_ticks = loop.missed_total;
  if (body.failure()) error_ = body.failure();
  if (const int sig = cancel_signal()) {
    out_.cancelled_by_signal = sig;
    if (!error_) error_ = fmt::format("cancelled by signal {}", sig);
  }
  for (const auto& p : schedule_phases(clk, loop.stopped_at_ns)) b_.phases.push_back(p);
  children_.end_of_schedule(loop.stopped_at_ns.has_value(),
                            (loop.stopped_at_ns ? harness::kernel::monotonic_ns() : clk.end_ns) + opt_.canary_exit_grace_ns);
  out_.reclaim = ReclaimOutcome{std::nullopt, page_size_};
  action_->finish(actx, b_, out_);
  std::stable_sort(b_.events.begin(), b_.events.end(),
                   [](const ControllerEvent& a, const ControllerEvent& z) { return a.t_ns < z.t_ns; });
  out_.trigger = trigger_outcome(controller.predicate(), !note, clk.pressure_start_ns);

  restore();
  TraceImport traces = import_traces(children_.all(), work_dir_, out_.oom ? out_.oom->fg_kills : std::nullopt);
  b_.requests = std::move(traces.requests);
  b_.artifacts = std::move(traces.artifacts);
  out_.canary_requests = traces.counts;
  if (!error_) error_ = traces.failure;
  out_.load = load_summary(spec_, read_pressure_gen_report(work_dir_ + "/pressure-gen.stdout"), b_.events);
  return finish();
}

void CaseRun::restore() {
  // The runner counts `restoration` as after the pressure phase (PROTOCOL.md): a case that
  // never reached pressure keeps showing its last phase while it restores.
  if (phase_.pressure_reported()) phase_.report("restoration");
  auto& vm = out_.vm_state ? *out_.vm_state : out_.vm_state.emplace();
  RestorationInputs in{fs_, cg_, backend_, children_, spec_.restoration_timeout_s, oom_start_,
                       vm.start ? vm.start->baseline : std::nullopt, variant_ ? &*variant_ : nullptr};
  const RestorationResult r = restore_case(in, restore_steps_);
  out_.oom = r.oom;
  out_.zram = ZramOutcome{r.zram};
  vm.end = r.vm_end;
  vm.baseline_check = r.baseline_check;
  out_.restoration = r.verdict;
  out_.processes = children_.all();
  b_.restoration = r.row;
  b_.phases.push_back(r.phase);
}

std::optional<std::int64_t> CaseRun::reclaim_write_cpu_ns() const {
  const auto& rec = out_.reclaim ? out_.reclaim->record : std::nullopt;
  if (rec && b_.reclaims.size() <= 1) return rec->write_cpu_ns;
  std::optional<std::int64_t> sum;
  for (const auto& row : b_.reclaims)
    if (row.write_cpu_us) sum = sum.value_or(0) + *row.write_cpu_us * 1000;
  return sum;
}

ExecutorResult CaseRun::finish() {
  ExecutorResult r = classify(error_, phase_.pressure_reported());
  b_.status = r.status;
  if (error_ && !error_->empty()) b_.error = error_;
  if (variant_) {  // an exit before restore() (qualification failed): knobs back now
    variant_->restore();
    out_.variant = *variant_;
  }
  out_.clocksource.end = read_clocksource_or_none(fs_);
  out_.steal = steal_summary(b_.telemetry);
  out_.harness_self = self_->finish(spec_.vm_vcpus, reclaim_write_cpu_ns(), telemetry_cpu_ns_);
  b_.outcome_json = outcome_json(out_).dump();
  b_.ended_unix_ns = unix_now_ns();
  const std::string path = (fs::path(opt_.out_dir) / (spec_.case_id + ".db")).string();
  try {
    write_bundle(path, b_);
    r.bundle_path = path;
  } catch (const std::exception& e) {
    r = classify((r.error.empty() ? "" : r.error + "; ") + "writing the bundle failed: " + e.what(),
                 phase_.pressure_reported());
  }
  return r;
}

}  // namespace

ExecutorResult run_case(const CaseSpec& spec, const ExecutorOptions& opt) {
  try {
    CaseRun run(spec, opt);
    return run.run();
  } catch (const std::exception& e) {
    return {3, "infra_failed", "", fmt::format("executor error: {}", e.what())};
  }
}

}  // namespace harness::case_
