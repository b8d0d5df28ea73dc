// Synthetic campaign DB generator (see synthetic.hpp).
#include "analysis/simulate/synthetic.hpp"

#include "analysis/data/study_facts.hpp"
#include "results/db.hpp"
#include "results/store/arms.hpp"
#include "results/store/canary_requests.hpp"
#include "results/store/cases.hpp"
#include "results/store/controller_events.hpp"
#include "results/store/meta.hpp"
#include "results/store/phases.hpp"
#include "results/store/reclaim_actions.hpp"
#include "results/store/restoration.hpp"
#include "results/store/schedule.hpp"
#include "results/store/telemetry.hpp"
#include "harness/digest/sha256.hpp"

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

namespace analysis {
namespace {

std::int64_t ll(double v) { return static_cast<std::int64_t>(std::llround(v)); }

// The study's arm at position c (study_facts.hpp): its name, and its behaviour in write().
const char* study_name(int c) { return kStudyArms[c].name; }

nlohmann::json make_spec(const std::string& case_id, const std::string& campaign, const std::string& vm,
                         const std::string& regime, int repeat, const std::string& triplet, const std::string& config,
                         std::int64_t dose, int warm, int press, int recov, int period_ms) {
  const bool fast = regime.rfind("fast", 0) == 0;
  const bool random = regime.find("random") != std::string::npos;
  nlohmann::json s = {
      {"case_id", case_id}, {"campaign", campaign}, {"vm", vm}, {"regime", regime}, {"repeat", repeat},
      {"configuration", config}, {"pinned_commit", "any"},
      {"vm_shape", {{"vcpus", 1}, {"memory_mib", 1024}}},
      {"phases_s", {{"warmup", warm}, {"pressure", press}, {"recovery", recov}}},
      {"cgroups", {{"parent", "harness"}, {"bg_memory_max_bytes", 314572800}, {"bg_memory_high_bytes", nullptr},
                   {"fg_memory_max_bytes", nullptr}, {"fg_memory_low_bytes", nullptr}}},
      {"backend", {{"zram_disksize_bytes", 536870912}, {"zram_algorithm", "lzo-rle"}, {"zram_priority", 100},
                   {"swapfile_path", "/var/lib/harness/swapfile"}, {"swapfile_priority", 10}}},
      {"pressure", {{"allocation_bytes", 629145600}, {"rate_mib_s", fast ? 64 : 16},
                    {"active_set_bytes", 134217728}, {"contents", random ? "random" : "structured"}, {"seed", 1}}},
      {"canaries", {{"period_ms", period_ms}, {"compute_hot_bytes", 16777216},
                    {"sqlite_db_path", "/var/lib/harness/canary.db"}, {"sqlite_queries_per_request", 8}, {"seed", 1}}},
      {"trigger", {{"window_ms", 1000}, {"min_increase_us", 1000}, {"consecutive_windows", 3}}},
      {"telemetry_period_ms", 1000}, {"restoration_timeout_s", 120}};
  if (!triplet.empty()) s["triplet_id"] = triplet;
  if (dose > 0) s["dose_bytes"] = dose;
  return s;
}

/// A completed case's outcome_json (harness/case/SPEC.md v2 keys) with plausible, deterministic
/// values: its load from the spec's rate, the study arm at `config`'s backend steps, `oom` a bg kill.
nlohmann::json synthetic_outcome(const nlohmann::json& spec, int repeat, int config, bool oom) {
  const double nominal = spec["pressure"]["rate_mib_s"].get<double>();
  return {
      {"trigger", {{"fired", true}, {"since_pressure_start_ns", 4'000'000'000LL}}},
      {"oom_kills", {{"bg", oom ? 1 : 0}, {"fg", 0}}},
      {"load", {{"nominal_rate_mib_s", nominal}, {"achieved_rate_mib_s", nominal * (0.97 - 0.01 * (repeat % 3))},
                {"episode", {{"fraction_of_pressure", 0.8}}}}},
      {"steal", {{"total_us", 1000 * repeat}, {"max_per_s_us", 200}}},
      {"harness_self", {{"cpu_ns", 1'500'000'000LL + 10'000'000LL * config}, {"peak_rss_kib", 12000 + 100 * config}}},
      // The backend as the executor records it: zram swapped on in setup except for
      // delayed activation, which swaps it on after the trigger (backend_on event).
      {"zram_device", "/dev/zram1"},
      {"setup_steps", config == kStudyDelayedArm ? nlohmann::json::array()
                                  : nlohmann::json::array({{{"step", "swapon /dev/zram1 prio 100"},
                                                            {"duration_ns", 1'000'000},
                                                            {"errno", 0},
                                                            {"message", ""}}})}};
}

/// A synthetic case's phase boundaries, ns: warmup from t0, pressure from tp, recovery from tr,
/// restoration from te (3 s long).
struct Timeline {
  std::int64_t t0, tp, tr, te;
};

// Writes one completed case: cases, phases, canary_requests, telemetry, trigger, reclaim, restoration
// (the three large tables through their rows tables, under the case key).
struct CaseWriter {
  results::Db& db;
  results::ScheduleWriter ins_sched;
  std::int64_t rows = 0;
  int ordinal = 0;
  explicit CaseWriter(results::Db& d) : db(d), ins_sched(d) {}

  void schedule(const std::string& id, const std::string& vm, const std::string& regime, int repeat,
                const std::string& triplet, const std::string& config, std::int64_t dose, const char* state) {
    ins_sched.write({.case_id = id,
                     .ordinal = ordinal++,
                     .vm = vm,
                     .regime = regime,
                     .repeat = repeat,
                     .triplet_id = triplet.empty() ? std::nullopt : std::optional<std::string>(triplet),
                     .configuration = config,
                     .dose_bytes = dose > 0 ? std::optional<std::int64_t>(dose) : std::nullopt,
                     .state = state});
  }

  void write(const std::string& id, const std::string& campaign, const std::string& vm, const std::string& regime,
             int repeat, const std::string& triplet, int config, std::int64_t dose, const std::string& status,
             const std::string& accel, const nlohmann::json& spec, const std::array<double, 2>& mult,
             const std::array<std::vector<double>, 2>& pattern, int warm, int press, int recov, int period_ms,
             double stall_scale, double reclaim_s, double achieved_ratio, int werrno, bool oom, bool clean,
             std::optional<double> conservative_ratio = std::nullopt, const std::string& arm_name = "") {
    results::CaseRow c;
    c.case_id = id;
    c.campaign = campaign;
    c.vm = vm;
    c.regime = regime;
    c.repeat = repeat;
    if (!triplet.empty()) c.triplet_id = triplet;
    c.configuration = arm_name.empty() ? std::string(study_name(config)) : arm_name;
    if (dose > 0) c.dose_bytes = dose;
    c.status = status;
    if (status != "completed") c.error = "agent lost (synthetic)";
    c.accelerator = accel;
    c.kernel_release = "6.1.0-57-cloud-amd64";
    c.source_commit = "synthetic";
    c.page_size_bytes = 4096;
    c.spec_json = spec.dump();
    if (status == "completed") c.outcome_json = synthetic_outcome(spec, repeat, config, oom).dump();
    // The large tables take the case's key (results/schema.sql, version 5), written directly.
    const std::int64_t key = results::insert_case(db, c);
    if (status != "completed") return;
    const std::int64_t s = 1'000'000'000;
    const Timeline tl{5 * s, 5 * s + warm * s, 5 * s + warm * s + press * s, 5 * s + warm * s + press * s + recov * s};
    write_phases(id, tl);
    write_requests(key, tl, mult, pattern, period_ms);
    const std::int64_t trig = tl.tp + 4 * s;
    // An arm that writes memory.reclaim (position 2) holds less in bg after its trigger: 48-80 MiB,
    // varying from case to case with the case's own multiplier (so paired differences vary).
    const double frac = mult[0] * 7919.0 - std::floor(mult[0] * 7919.0);
    write_telemetry(key, tl, stall_scale, oom, config == kStudyTreatment ? std::optional<std::int64_t>(trig) : std::nullopt,
                    ll((48.0 + 32.0 * frac) * 1048576));
    write_events(key, trig, config);
    if (config == kStudyTreatment) write_reclaim(id, dose, trig, reclaim_s, achieved_ratio, werrno, conservative_ratio);
    results::insert_restoration(db, id, {tl.te, tl.te + 3 * s, clean ? 1 : 0, "{}"});
  }

  /// The four phases of `tl`.
  void write_phases(const std::string& id, const Timeline& tl) {
    const std::int64_t s = 1'000'000'000;
    results::insert_phases(db, id, {{"warmup", tl.t0, tl.tp}, {"pressure", tl.tp, tl.tr}, {"recovery", tl.tr, tl.te},
                                    {"restoration", tl.te, tl.te + 3 * s}});
  }

  /// Both canaries' requests every `period_ms` from t0 to te: response = pattern x mult (x 0.4
  /// outside pressure), at least 1 ms; wake at 30% of it.
  void write_requests(std::int64_t key, const Timeline& tl, const std::array<double, 2>& mult,
                      const std::array<std::vector<double>, 2>& pattern, int period_ms) {
    const std::int64_t period = static_cast<std::int64_t>(period_ms) * 1'000'000;
    const char* canaries[2] = {"compute", "sqlite"};
    results::CanaryRequestWriter ins_req(db, key);
    for (int k = 0; k < 2; ++k) {
      const auto& pat = pattern[k];
      std::int64_t seq = 0;
      std::size_t pi = 0;
      for (std::int64_t t = tl.t0; t < tl.te; t += period, ++seq) {
        const bool in_p = t >= tl.tp && t < tl.tr;
        const double resp_us = (in_p ? mult[k] : 0.4 * mult[k]) * pat[pi++ % pat.size()];
        const std::int64_t resp = std::max<std::int64_t>(1000, ll(resp_us * 1000.0));
        const std::int64_t wake = std::max<std::int64_t>(1, resp * 3 / 10);
        ins_req.write({canaries[k], seq, t, t + wake, t + resp, 0, 0, 1, 0});
        ++rows;
      }
    }
  }

  /// Telemetry every second from t0 to te: cumulative counters growing during pressure at rates
  /// scaled by `stall_scale`; `oom` a bg OOM kill in the last sample; from `freed_at` on (an arm
  /// that reclaims) bg memory.current `freed` bytes lower. CPU: kswapd 20 ms/s x stall_scale, bg
  /// 900 ms/s of which 300 system, fg 150 ms/s of which 20 system, in pressure.
  void write_telemetry(std::int64_t key, const Timeline& tl, double stall_scale, bool oom,
                       std::optional<std::int64_t> freed_at, std::int64_t freed) {
    const std::int64_t s = 1'000'000'000;
    double some = 0, full = 0, refa = 0, refb = 0, pswpout = 0, zram = 0, cpu[5] = {0, 0, 0, 0, 0};
    results::TelemetryWriter ins_tel(db, key);
    for (std::int64_t t = tl.t0; t <= tl.te; t += s) {
      const bool in_p = t > tl.tp && t <= tl.tr;
      if (in_p) {
        some += 6000 * stall_scale;
        full += 5000 * stall_scale;
        refa += 100 * stall_scale;
        refb += 10 * stall_scale;
        pswpout += 80;
        zram = std::min(200.0 * 1048576, zram + 4.0 * 1048576);
        const double per_s_us[5] = {20000 * stall_scale, 900000, 300000, 150000, 20000};
        for (int i = 0; i < 5; ++i) cpu[i] += per_s_us[i];
      }
      const std::int64_t bg_current = 300000000 - (freed_at && t >= *freed_at ? freed : 0);
      const char* ph = t < tl.tp ? "warmup" : t < tl.tr ? "pressure" : "recovery";
      // The whole system: bg's and fg's some (their stalls taken as disjoint), full at half bg's.
      ins_tel.write({.t_ns = t, .phase = ph, .bg_some_us = ll(some), .bg_full_us = ll(full), .fg_some_us = ll(some * 0.01),
                     .fg_full_us = 0, .sys_some_us = ll(some * 1.01), .sys_full_us = ll(full * 0.5),
                     .bg_current_bytes = bg_current, .bg_swap_current_bytes = ll(pswpout * 4096),
                     .bg_workingset_refault_anon = ll(refa), .bg_workingset_refault_file = ll(refb),
                     .fg_workingset_refault_anon = 0, .fg_workingset_refault_file = 0,
                     .bg_oom_kill = oom && t == tl.te ? 1 : 0, .fg_oom_kill = 0, .pswpin = 0, .pswpout = ll(pswpout),
                     .zram_orig_data_bytes = ll(zram), .zram_compr_data_bytes = ll(zram / 3),
                     .zram_mem_used_bytes = ll(zram / 3 + 1e6), .kswapd_cpu_us = ll(cpu[0]),
                     .bg_cpu_usage_us = ll(cpu[1]), .bg_cpu_system_us = ll(cpu[2]), .fg_cpu_usage_us = ll(cpu[3]),
                     .fg_cpu_system_us = ll(cpu[4])});
    }
  }

  /// The trigger at `trig` (would_trigger for static zram, position 0) and, for delayed
  /// activation (position 1), its backend_on event 1 ms later.
  void write_events(std::int64_t key, std::int64_t trig, int config) {
    results::ControllerEventWriter ins_ev(db, key);
    ins_ev.write({.t_ns = trig, .kind = config == kStudyStaticArm ? "would_trigger" : "trigger", .some_total_us = 30000,
                  .delta_us = 6000, .counting = 1, .consecutive = 3});
    if (config == kStudyDelayedArm)
      ins_ev.write({.t_ns = trig + 1'000'000,
                    .kind = "backend_on",
                    .detail_json = nlohmann::json{{"trigger_t_ns", trig},
                                                  {"step", {{"step", "swapon /dev/zram1 prio 100"}, {"errno", 0}}}}
                                       .dump()});
  }

  /// Bounded reclaim's one memory.reclaim write of `dose` at `trig`, `reclaim_s` long, achieving
  /// dose x achieved_ratio (the conservative figure from `conservative_ratio` when given).
  void write_reclaim(const std::string& id, std::int64_t dose, std::int64_t trig, double reclaim_s,
                     double achieved_ratio, int werrno, std::optional<double> conservative_ratio) {
    const std::int64_t dur = ll(reclaim_s * 1e9);
    const std::int64_t achieved = ll(static_cast<double>(dose) * achieved_ratio);
    results::ReclaimActionRow r{.requested_bytes = dose, .start_ns = trig, .end_ns = trig + dur, .duration_ns = dur,
                                .write_errno = werrno, .pgsteal_before = 1000, .pgsteal_after = 1000 + achieved / 4096,
                                .pgsteal_settled = 1000 + achieved / 4096, .bg_current_before_bytes = 400000000,
                                .bg_current_after_bytes = 300000000, .achieved_bytes = achieved,
                                .achieved_counter = "pgsteal"};
    if (conservative_ratio) {
      const std::int64_t cons = ll(static_cast<double>(dose) * *conservative_ratio);
      r.concurrent_estimate_bytes = std::max<std::int64_t>(0, achieved - cons);
      r.achieved_conservative_bytes = cons;
    }
    results::insert_reclaim_actions(db, id, {r});
  }
};

std::array<std::vector<double>, 2> make_patterns(std::uint64_t seed, std::size_t n, double base_p99_us) {
  boost::random::mt19937_64 gen(seed ^ 0x5eedULL);
  boost::random::normal_distribution<double> z(0.0, 1.0);
  std::array<std::vector<double>, 2> p;
  for (int k = 0; k < 2; ++k) {
    p[k].resize(n);
    for (auto& v : p[k]) v = std::exp(0.6 * z(gen));
    std::vector<double> sorted = p[k];
    std::sort(sorted.begin(), sorted.end());
    const double p99 = sorted[static_cast<std::size_t>(0.99 * (n - 1))];
    for (auto& v : p[k]) v *= base_p99_us * (k ? 1.5 : 1.0) / p99;
  }
  return p;
}

void write_meta(results::Db& db, const std::string& campaign, std::uint64_t seed, const std::string& yaml = "") {
  results::put_meta(db, "campaign", campaign);
  results::put_meta(db, "seed", std::to_string(seed));
  results::put_meta(db, "campaign_yaml", yaml.empty() ? "# synthetic campaign (analysis/simulate/synthetic.cpp)\n" : yaml);
  results::put_meta(db, "schedule_sha256", "synthetic");
  // The mark every artifact made from this DB reads (results/provenance.hpp is_synthetic_db).
  results::put_meta(db, "synthetic", "analysis/simulate/synthetic.cpp: no case ran");
}

// The `arms` table (results/schema.sql, version 6): the study's three then `extra`, position =
// report order, sha256 = SHA-256 of {"name","params","policy"} as canonical JSON
// (harness/case/control/arm.hpp).
void write_arms_table(results::Db& db, const std::vector<SyntheticArm>& extra) {
  std::vector<results::ArmRow> arms;
  auto add = [&](const std::string& name, const std::string& policy, const std::string& params) {
    const auto p = nlohmann::json::parse(params);
    const std::string canonical = nlohmann::json{{"name", name}, {"params", p}, {"policy", policy}}.dump();
    arms.push_back({name, policy, p.dump(), harness::digest::sha256_hex(canonical), static_cast<std::int64_t>(arms.size())});
  };
  for (int c = 0; c < static_cast<int>(kStudyArmCount); ++c) add(study_name(c), study_name(c), c == kStudyTreatment ? R"({"dose_mib":96})" : "{}");
  for (const auto& a : extra) add(a.name, a.policy, a.params_json);
  results::insert_arms(db, arms);
}

}  // namespace

SyntheticOptions benchmark_campaign(bool quick) {
  return SyntheticOptions{.vms = 5,
                          .triplets_per_stratum = 3,
                          .warmup_s = quick ? 12 : 120,
                          .pressure_s = quick ? 30 : 300,
                          .recovery_s = quick ? 12 : 120};
}

namespace {

/// One arm of a synthetic matched block: its name, the study arm whose cases it behaves like
/// (position in kStudyArms: what its policy does, whether it carries the dose), its log effect on
/// the p99 per canary (compute, sqlite; static zram = 0) and its bg stall scale.
struct BlockArm {
  std::string name;
  int like = 0;
  std::array<double, 2> effect{};
  double stall = 1.0;
};

/// The arms of every block, in block order: the study's (static zram 0, bounded reclaim ln(r_cs),
/// delayed activation reclaim - ln(r_cd) per canary; stall 1.3, 1.1, 1.0), then o.extra_arms
/// (their log_effect; stall 1.0).
std::vector<BlockArm> block_arms(const SyntheticOptions& o) {
  std::vector<BlockArm> arms;
  for (int c = 0; c < static_cast<int>(kStudyArmCount); ++c) arms.push_back({study_name(c), c, {0.0, 0.0}, 1.0});
  arms[kStudyStaticArm].stall = 1.3;
  arms[kStudyDelayedArm].stall = 1.1;
  for (int k = 0; k < 2; ++k) {
    arms[kStudyTreatment].effect[k] = std::log(o.true_ratios[2 * k]);
    arms[kStudyDelayedArm].effect[k] = arms[kStudyTreatment].effect[k] - std::log(o.true_ratios[2 * k + 1]);
  }
  for (const auto& a : o.extra_arms) arms.push_back({a.name, a.like, a.log_effect, 1.0});
  return arms;
}

/// The plan's declared comparisons (schedule JSON analysis.comparisons), when there are any.
void write_comparisons(results::Db& db, const std::string& campaign, const std::vector<std::string>& comparisons) {
  if (comparisons.empty()) return;
  results::put_meta(db, "schedule_json",
                    nlohmann::json{{"format", "reclaim-harness-schedule/1"},
                                   {"campaign", campaign},
                                   {"analysis", {{"comparisons", comparisons}}}}
                        .dump());
}

}  // namespace

std::int64_t write_synthetic_campaign(const std::string& path, const SyntheticOptions& o) {
  for (double r : o.true_ratios)
    if (!(r > 0)) throw std::invalid_argument("synthetic: true ratios must be > 0");
  if (o.vms < 1 || o.regimes.empty() || o.triplets_per_stratum < 1)
    throw std::invalid_argument("synthetic: empty design");
  std::filesystem::remove(path);
  results::Db db(path, results::Db::Mode::Create);
  const auto arms = block_arms(o);
  const std::size_t npress = static_cast<std::size_t>(o.pressure_s) * 1000 / o.period_ms;
  const auto pattern = make_patterns(o.seed, std::max<std::size_t>(npress, 1), o.base_p99_us);
  boost::random::mt19937_64 gen(o.seed);
  boost::random::normal_distribution<double> z(0.0, 1.0);
  const std::string campaign = "synthetic";
  std::int64_t rows = 0;
  db.transaction([&] {
    write_meta(db, campaign, o.seed, o.campaign_yaml);
    write_comparisons(db, campaign, o.comparisons);
    if (o.write_arms) write_arms_table(db, o.extra_arms);
    CaseWriter w(db);
    int extra_failed = o.infra_failed_cases, extra_missing = o.missing_cases;
    for (int v = 0; v < o.vms; ++v) {
      const std::string vm = fmt::format("vm{}", v);
      for (const auto& regime : o.regimes) {
        const double se = o.stratum_sd * z(gen);
        for (int rep = 1; rep <= o.triplets_per_stratum; ++rep) {
          const double te = o.triplet_sd * z(gen);
          const std::string trip = fmt::format("{}/{}/{}", vm, regime, rep);
          for (const auto& arm : arms) {  // the study's three, then a k-arm campaign's others
            const std::string id = fmt::format("{}-{}-{}-r{}-{}", campaign, vm, regime, rep, arm.name);
            std::array<double, 2> mult;
            for (int k = 0; k < 2; ++k) mult[k] = std::exp(se + te + arm.effect[k] + o.case_sd * z(gen));
            const bool dosed = arm.like == kStudyTreatment;
            const std::int64_t dose = dosed ? 100663296 : 0;
            const auto spec = make_spec(id, campaign, vm, regime, rep, trip, arm.name, dose, o.warmup_s, o.pressure_s,
                                        o.recovery_s, o.period_ms);
            w.schedule(id, vm, regime, rep, trip, arm.name, dose, "completed");
            w.write(id, campaign, vm, regime, rep, trip, arm.like, dose, "completed", o.accelerator, spec, mult, pattern,
                    o.warmup_s, o.pressure_s, o.recovery_s, o.period_ms, arm.stall, 0.15, 1.2, 0, false, true,
                    dosed ? std::optional<double>(1.05) : std::nullopt, arm.name);
          }
        }
        // Extra cases (not part of complete triplets): infra_failed records and missing schedule rows.
        const int rep = o.triplets_per_stratum + 1;
        const std::string trip = fmt::format("{}/{}/{}", vm, regime, rep);
        if (extra_failed > 0) {
          --extra_failed;
          const std::string id = fmt::format("{}-{}-{}-r{}-{}", campaign, vm, regime, rep, study_name(kStudyStaticArm));
          w.schedule(id, vm, regime, rep, trip, study_name(kStudyStaticArm), 0, "infra_failed");
          w.write(id, campaign, vm, regime, rep, trip, kStudyStaticArm, 0, "infra_failed", o.accelerator,
                  make_spec(id, campaign, vm, regime, rep, trip, study_name(kStudyStaticArm), 0, o.warmup_s, o.pressure_s,
                            o.recovery_s, o.period_ms),
                  {1, 1}, pattern, o.warmup_s, o.pressure_s, o.recovery_s, o.period_ms, 1, 0, 0, 0, false, true);
        }
        if (extra_missing > 0) {
          --extra_missing;
          const std::string id = fmt::format("{}-{}-{}-r{}-{}", campaign, vm, regime, rep, study_name(kStudyDelayedArm));
          w.schedule(id, vm, regime, rep, trip, study_name(kStudyDelayedArm), 0, "pending");
        }
      }
    }
    rows = w.rows;
  });
  return rows;
}

std::int64_t write_synthetic_pilot(const std::string& path, const std::vector<SyntheticDose>& doses,
                                   std::uint64_t seed, int pressure_s, const std::string& campaign_yaml) {
  std::filesystem::remove(path);
  results::Db db(path, results::Db::Mode::Create);
  const auto pattern = make_patterns(seed, static_cast<std::size_t>(pressure_s) * 10, 20000);
  const std::vector<std::string> regimes{"slow-structured", "slow-random", "fast-structured", "fast-random"};
  std::int64_t rows = 0;
  db.transaction([&] {
    write_meta(db, "pilot", seed, campaign_yaml);
    CaseWriter w(db);
    for (const auto& d : doses) {
      for (std::size_t i = 0; i < regimes.size(); ++i) {
        const bool worst = i == 0;  // the first regime carries the dose's worst values
        const std::string id = fmt::format("pilot-vm0-{}-dose{}", regimes[i], d.dose_bytes / 1048576);
        if (static_cast<int>(i) >= d.regimes) {  // scheduled, never run
          w.schedule(id, "vm0", regimes[i], 1, "", study_name(kStudyTreatment), d.dose_bytes, "pending");
          continue;
        }
        const double dur = worst ? d.worst_duration_s : d.worst_duration_s * 0.5;
        const double ach = worst ? d.min_achieved_ratio : std::max(d.min_achieved_ratio, 1.1);
        w.schedule(id, "vm0", regimes[i], 1, "", study_name(kStudyTreatment), d.dose_bytes, "completed");
        w.write(id, "pilot", "vm0", regimes[i], 1, "", 2, d.dose_bytes, "completed", "kvm",
                make_spec(id, "pilot", "vm0", regimes[i], 1, "", study_name(kStudyTreatment), d.dose_bytes, 10, pressure_s, 10, 100),
                {1, 1}, pattern, 10, pressure_s, 10, 100, 1.0, dur, ach, worst ? d.write_errno : 0, worst && d.oom,
                worst ? d.restoration_clean : true,
                d.min_conservative_ratio ? std::optional<double>(worst ? *d.min_conservative_ratio
                                                                       : std::max(*d.min_conservative_ratio, 1.1))
                                         : std::nullopt);
      }
    }
    rows = w.rows;
  });
  return rows;
}

std::int64_t write_synthetic_ab(const std::string& path, const SyntheticAbOptions& o) {
  for (double r : {o.p99_ratio, o.stall_ratio, o.reclaim_ratio})
    if (!(r > 0)) throw std::invalid_argument("synthetic A/B: ratios must be > 0");
  if (o.vms < 1 || o.regimes.empty() || o.pairs_per_stratum < 1) throw std::invalid_argument("synthetic A/B: empty design");
  std::filesystem::remove(path);
  results::Db db(path, results::Db::Mode::Create);
  const int period_ms = 100;
  const std::size_t npress = static_cast<std::size_t>(o.pressure_s) * 1000 / period_ms;
  const auto pattern = make_patterns(o.seed, std::max<std::size_t>(npress, 1), 20000);
  boost::random::mt19937_64 gen(o.seed);
  boost::random::normal_distribution<double> z(0.0, 1.0);
  const std::string& campaign = o.campaign;
  const char* variants[2] = {"baseline", "candidate"};
  std::int64_t rows = 0;
  db.transaction([&] {
    write_meta(db, campaign, o.seed, o.campaign_yaml);
    CaseWriter w(db);
    for (int v = 0; v < o.vms; ++v) {
      const std::string vm = fmt::format("vm{}", v);
      for (const auto& regime : o.regimes) {
        const double se = o.stratum_sd * z(gen);
        for (int rep = 1; rep <= o.pairs_per_stratum; ++rep) {
          for (int c = 0; c < static_cast<int>(kStudyArmCount); ++c) {
            const std::string pair = fmt::format("{}/{}/{}/{}", vm, regime, rep, study_name(c));
            for (int vi = 0; vi < 2; ++vi) {
              const std::string id = fmt::format("{}-{}-{}-r{}-{}-{}", campaign, vm, regime, rep, study_name(c), variants[vi]);
              const std::string trip = fmt::format("{}/{}/{}/{}", vm, regime, rep, variants[vi]);
              const std::int64_t dose = c == kStudyTreatment ? 100663296 : 0;
              auto spec = make_spec(id, campaign, vm, regime, rep, trip, study_name(c), dose, o.warmup_s, o.pressure_s,
                                    o.recovery_s, period_ms);
              spec["variant"] = {{"name", variants[vi]}, {"pair_id", pair}, {"sysctls", nlohmann::json::object()},
                                 {"sysfs", nlohmann::json::object()}, {"cmdline", nlohmann::json::array()},
                                 {"kernel_release", nullptr}, {"kernel_image_dir", nullptr}};
              std::array<double, 2> mult;
              for (int k = 0; k < 2; ++k) mult[k] = std::exp(se + o.case_sd * z(gen)) * (vi ? o.p99_ratio : 1.0);
              const double stall = o.stall_scale * std::exp(o.case_sd * z(gen)) * (vi ? o.stall_ratio : 1.0);
              const double reclaim_s = 0.15 * std::exp(o.case_sd * z(gen)) * (vi ? o.reclaim_ratio : 1.0);
              w.schedule(id, vm, regime, rep, trip, study_name(c), dose, "completed");
              w.write(id, campaign, vm, regime, rep, trip, c, dose, "completed", "kvm", spec, mult, pattern,
                      o.warmup_s, o.pressure_s, o.recovery_s, period_ms, stall, reclaim_s, 1.2, 0, false, true,
                      c == kStudyTreatment ? std::optional<double>(1.05) : std::nullopt);
            }
          }
        }
      }
    }
    rows = w.rows;
  });
  return rows;
}

}  // namespace analysis
