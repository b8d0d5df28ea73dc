// Synthetic campaign DB generator (see synthetic.hpp).
#include "analysis/synthetic.hpp"

#include "analysis/study_medians.hpp"
#include "results/db.hpp"
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

// The study's arm at position c (study_medians.hpp): its name, and its behaviour in write().
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
      {"setup_steps", config == 1 ? nlohmann::json::array()
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
  results::Stmt ins_case, ins_phase, ins_req, ins_tel, ins_ev, ins_rec, ins_rest, ins_sched;
  std::int64_t rows = 0;
  int ordinal = 0;
  explicit CaseWriter(results::Db& d)
      : db(d),
        ins_case(d, "INSERT INTO cases(case_id,campaign,vm,regime,repeat,triplet_id,configuration,dose_bytes,attempt,"
                    "status,error,accelerator,kernel_release,source_commit,page_size_bytes,spec_json,outcome_json) "
                    "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,1,?9,?10,?11,'6.1.0-57-cloud-amd64','synthetic',4096,?12,?13)"),
        ins_phase(d, "INSERT INTO phases(case_id,phase,start_ns,end_ns) VALUES(?1,?2,?3,?4)"),
        ins_req(d, "INSERT INTO canary_requests_rows(case_key,canary,seq,scheduled_ns,wake_ns,completion_ns,minflt,majflt,"
                   "nvcsw,nivcsw) VALUES(?1,?2,?3,?4,?5,?6,0,0,1,0)"),
        ins_tel(d, "INSERT INTO telemetry_rows(case_key,t_ns,phase,bg_some_us,bg_full_us,fg_some_us,fg_full_us,"
                   "bg_workingset_refault_anon,bg_workingset_refault_file,fg_workingset_refault_anon,"
                   "fg_workingset_refault_file,pswpin,pswpout,bg_current_bytes,bg_swap_current_bytes,"
                   "zram_orig_data_bytes,zram_compr_data_bytes,zram_mem_used_bytes,bg_oom_kill,fg_oom_kill,"
                   "sys_some_us,sys_full_us) "
                   "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,0,?20,?21)"),
        ins_ev(d, "INSERT INTO controller_events_rows(case_key,t_ns,kind,some_total_us,delta_us,counting,consecutive) "
                  "VALUES(?1,?2,?3,?4,?5,?6,?7)"),
        ins_rec(d, "INSERT INTO reclaim_actions(case_id,requested_bytes,start_ns,end_ns,duration_ns,write_errno,"
                   "pgsteal_before,pgsteal_after,pgsteal_settled,bg_current_before_bytes,bg_current_after_bytes,"
                   "achieved_bytes,concurrent_estimate_bytes,achieved_conservative_bytes,achieved_counter) "
                   "VALUES(?1,?2,?3,?4,?5,?6,1000,?7,?7,400000000,300000000,?8,?9,?10,'pgsteal')"),
        ins_rest(d, "INSERT INTO restoration(case_id,start_ns,end_ns,clean,detail_json) VALUES(?1,?2,?3,?4,'{}')"),
        ins_sched(d, "INSERT INTO schedule(case_id,ordinal,vm,regime,repeat,triplet_id,configuration,dose_bytes,state) "
                     "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)") {}

  void schedule(const std::string& id, const std::string& vm, const std::string& regime, int repeat,
                const std::string& triplet, const std::string& config, std::int64_t dose, const char* state) {
    ins_sched.bind(1, id).bind(2, ordinal++).bind(3, vm).bind(4, regime).bind(5, repeat);
    triplet.empty() ? ins_sched.bind_null(6) : ins_sched.bind(6, triplet);
    ins_sched.bind(7, config);
    dose > 0 ? ins_sched.bind(8, dose) : ins_sched.bind_null(8);
    ins_sched.bind(9, state).run();
  }

  void write(const std::string& id, const std::string& campaign, const std::string& vm, const std::string& regime,
             int repeat, const std::string& triplet, int config, std::int64_t dose, const std::string& status,
             const std::string& accel, const nlohmann::json& spec, const std::array<double, 2>& mult,
             const std::array<std::vector<double>, 2>& pattern, int warm, int press, int recov, int period_ms,
             double stall_scale, double reclaim_s, double achieved_ratio, int werrno, bool oom, bool clean,
             std::optional<double> conservative_ratio = std::nullopt, const std::string& arm_name = "") {
    ins_case.bind(1, id).bind(2, campaign).bind(3, vm).bind(4, regime).bind(5, repeat);
    triplet.empty() ? ins_case.bind_null(6) : ins_case.bind(6, triplet);
    ins_case.bind(7, arm_name.empty() ? std::string(study_name(config)) : arm_name);
    dose > 0 ? ins_case.bind(8, dose) : ins_case.bind_null(8);
    ins_case.bind(9, status);
    status == "completed" ? ins_case.bind_null(10) : ins_case.bind(10, "agent lost (synthetic)");
    ins_case.bind(11, accel).bind(12, spec.dump());
    if (status == "completed")
      ins_case.bind(13, synthetic_outcome(spec, repeat, config, oom).dump());
    else
      ins_case.bind_null(13);
    ins_case.run();
    if (status != "completed") return;
    // The large tables take the case's key (results/schema.sql, version 5), written directly.
    const std::int64_t key = db.last_insert_rowid();
    const std::int64_t s = 1'000'000'000;
    const Timeline tl{5 * s, 5 * s + warm * s, 5 * s + warm * s + press * s, 5 * s + warm * s + press * s + recov * s};
    write_phases(id, tl);
    write_requests(key, tl, mult, pattern, period_ms);
    write_telemetry(key, tl, stall_scale, oom);
    const std::int64_t trig = tl.tp + 4 * s;
    write_events(key, id, trig, config);
    if (config == 2) write_reclaim(id, dose, trig, reclaim_s, achieved_ratio, werrno, conservative_ratio);
    ins_rest.bind(1, id).bind(2, tl.te).bind(3, tl.te + 3 * s).bind(4, clean ? 1 : 0).run();
  }

  /// The four phases of `tl`.
  void write_phases(const std::string& id, const Timeline& tl) {
    const std::int64_t s = 1'000'000'000;
    ins_phase.bind(1, id).bind(2, "warmup").bind(3, tl.t0).bind(4, tl.tp).run();
    ins_phase.bind(1, id).bind(2, "pressure").bind(3, tl.tp).bind(4, tl.tr).run();
    ins_phase.bind(1, id).bind(2, "recovery").bind(3, tl.tr).bind(4, tl.te).run();
    ins_phase.bind(1, id).bind(2, "restoration").bind(3, tl.te).bind(4, tl.te + 3 * s).run();
  }

  /// Both canaries' requests every `period_ms` from t0 to te: response = pattern x mult (x 0.4
  /// outside pressure), at least 1 ms; wake at 30% of it.
  void write_requests(std::int64_t key, const Timeline& tl, const std::array<double, 2>& mult,
                      const std::array<std::vector<double>, 2>& pattern, int period_ms) {
    const std::int64_t period = static_cast<std::int64_t>(period_ms) * 1'000'000;
    const char* canaries[2] = {"compute", "sqlite"};
    for (int k = 0; k < 2; ++k) {
      const auto& pat = pattern[k];
      std::int64_t seq = 0;
      std::size_t pi = 0;
      for (std::int64_t t = tl.t0; t < tl.te; t += period, ++seq) {
        const bool in_p = t >= tl.tp && t < tl.tr;
        const double resp_us = (in_p ? mult[k] : 0.4 * mult[k]) * pat[pi++ % pat.size()];
        const std::int64_t resp = std::max<std::int64_t>(1000, ll(resp_us * 1000.0));
        const std::int64_t wake = std::max<std::int64_t>(1, resp * 3 / 10);
        ins_req.bind(1, key).bind(2, canaries[k]).bind(3, seq).bind(4, t).bind(5, t + wake).bind(6, t + resp).run();
        ++rows;
      }
    }
  }

  /// Telemetry every second from t0 to te: cumulative counters growing during pressure at rates
  /// scaled by `stall_scale`; `oom` a bg OOM kill in the last sample.
  void write_telemetry(std::int64_t key, const Timeline& tl, double stall_scale, bool oom) {
    const std::int64_t s = 1'000'000'000;
    double some = 0, full = 0, refa = 0, refb = 0, pswpout = 0, zram = 0;
    for (std::int64_t t = tl.t0; t <= tl.te; t += s) {
      const bool in_p = t > tl.tp && t <= tl.tr;
      if (in_p) {
        some += 6000 * stall_scale;
        full += 5000 * stall_scale;
        refa += 100 * stall_scale;
        refb += 10 * stall_scale;
        pswpout += 80;
        zram = std::min(200.0 * 1048576, zram + 4.0 * 1048576);
      }
      const char* ph = t < tl.tp ? "warmup" : t < tl.tr ? "pressure" : "recovery";
      ins_tel.bind(1, key).bind(2, t).bind(3, ph).bind(4, ll(some)).bind(5, ll(full))
          .bind(6, ll(some * 0.01)).bind(7, std::int64_t{0}).bind(8, ll(refa))
          .bind(9, ll(refb)).bind(10, std::int64_t{0}).bind(11, std::int64_t{0}).bind(12, std::int64_t{0})
          .bind(13, ll(pswpout)).bind(14, std::int64_t{300000000}).bind(15, ll(pswpout * 4096))
          .bind(16, ll(zram)).bind(17, ll(zram / 3)).bind(18, ll(zram / 3 + 1e6))
          .bind(19, std::int64_t{oom && t == tl.te ? 1 : 0})
          // The whole system: bg's and fg's some (their stalls taken as disjoint), full at half bg's.
          .bind(20, ll(some * 1.01)).bind(21, ll(full * 0.5))
          .run();
    }
  }

  /// The trigger at `trig` (would_trigger for static zram, position 0) and, for delayed
  /// activation (position 1), its backend_on event 1 ms later.
  void write_events(std::int64_t key, const std::string& id, std::int64_t trig, int config) {
    ins_ev.bind(1, key).bind(2, trig).bind(3, config == 0 ? "would_trigger" : "trigger").bind(4, std::int64_t{30000})
        .bind(5, std::int64_t{6000}).bind(6, 1).bind(7, 3).run();
    if (config == 1) {
      results::Stmt on(db, "INSERT INTO controller_events(case_id,t_ns,kind,detail_json) VALUES(?1,?2,'backend_on',?3)");
      on.bind(1, id).bind(2, trig + 1'000'000)
          .bind(3, nlohmann::json{{"trigger_t_ns", trig}, {"step", {{"step", "swapon /dev/zram1 prio 100"}, {"errno", 0}}}}.dump())
          .run();
    }
  }

  /// Bounded reclaim's one memory.reclaim write of `dose` at `trig`, `reclaim_s` long, achieving
  /// dose x achieved_ratio (the conservative figure from `conservative_ratio` when given).
  void write_reclaim(const std::string& id, std::int64_t dose, std::int64_t trig, double reclaim_s,
                     double achieved_ratio, int werrno, std::optional<double> conservative_ratio) {
    const std::int64_t dur = ll(reclaim_s * 1e9);
    const std::int64_t achieved = ll(static_cast<double>(dose) * achieved_ratio);
    ins_rec.bind(1, id).bind(2, dose).bind(3, trig).bind(4, trig + dur).bind(5, dur).bind(6, werrno)
        .bind(7, 1000 + achieved / 4096).bind(8, achieved);
    if (conservative_ratio) {
      const std::int64_t cons = ll(static_cast<double>(dose) * *conservative_ratio);
      ins_rec.bind(9, std::max<std::int64_t>(0, achieved - cons)).bind(10, cons);
    } else {
      ins_rec.bind_null(9).bind_null(10);
    }
    ins_rec.run();
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
  results::Stmt st(db, "INSERT OR REPLACE INTO campaign_meta(key,value) VALUES(?1,?2)");
  st.bind(1, "campaign").bind(2, campaign).run();
  st.bind(1, "seed").bind(2, std::to_string(seed)).run();
  st.bind(1, "campaign_yaml").bind(2, yaml.empty() ? "# synthetic campaign (analysis/synthetic.cpp)\n" : yaml).run();
  st.bind(1, "schedule_sha256").bind(2, "synthetic").run();
}

// The `arms` table (results/schema.sql, version 6): the study's three then `extra`, position =
// report order, sha256 = SHA-256 of {"name","params","policy"} as canonical JSON
// (harness/case/arm.hpp).
void write_arms_table(results::Db& db, const std::vector<SyntheticArm>& extra) {
  results::Stmt st(db, "INSERT INTO arms(name, policy, params_json, sha256, position) VALUES(?1,?2,?3,?4,?5)");
  int position = 0;
  auto add = [&](const std::string& name, const std::string& policy, const std::string& params) {
    const auto p = nlohmann::json::parse(params);
    const std::string canonical = nlohmann::json{{"name", name}, {"params", p}, {"policy", policy}}.dump();
    st.bind(1, name).bind(2, policy).bind(3, p.dump()).bind(4, harness::digest::sha256_hex(canonical)).bind(5, position++).run();
  };
  for (int c = 0; c < 3; ++c) add(study_name(c), study_name(c), c == kStudyTreatment ? R"({"dose_mib":96})" : "{}");
  for (const auto& a : extra) add(a.name, a.policy, a.params_json);
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

/// Log effects per canary (compute, sqlite) and study arm: static = 0, reclaim = ln(r_cs),
/// delayed = reclaim - ln(r_cd).
std::array<std::array<double, 3>, 2> log_effects(const SyntheticOptions& o) {
  std::array<std::array<double, 3>, 2> eff{};
  for (int k = 0; k < 2; ++k) {
    eff[k][0] = 0.0;
    eff[k][2] = std::log(o.true_ratios[2 * k]);
    eff[k][1] = eff[k][2] - std::log(o.true_ratios[2 * k + 1]);
  }
  return eff;
}

/// The plan's declared comparisons (schedule JSON analysis.comparisons), when there are any.
void write_comparisons(results::Db& db, const std::string& campaign, const std::vector<std::string>& comparisons) {
  if (comparisons.empty()) return;
  results::Stmt st(db, "INSERT OR REPLACE INTO campaign_meta(key,value) VALUES('schedule_json',?1)");
  st.bind(1, nlohmann::json{{"format", "reclaim-harness-schedule/1"},
                            {"campaign", campaign},
                            {"analysis", {{"comparisons", comparisons}}}}
                 .dump())
      .run();
}

}  // namespace

std::int64_t write_synthetic_campaign(const std::string& path, const SyntheticOptions& o) {
  for (double r : o.true_ratios)
    if (!(r > 0)) throw std::invalid_argument("synthetic: true ratios must be > 0");
  if (o.vms < 1 || o.regimes.empty() || o.triplets_per_stratum < 1)
    throw std::invalid_argument("synthetic: empty design");
  std::filesystem::remove(path);
  results::Db db(path, results::Db::Mode::Create);
  const auto eff = log_effects(o);
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
          for (int c = 0; c < 3; ++c) {
            const std::string id = fmt::format("{}-{}-{}-r{}-{}", campaign, vm, regime, rep, study_name(c));
            std::array<double, 2> mult;
            for (int k = 0; k < 2; ++k) mult[k] = std::exp(se + te + eff[k][c] + o.case_sd * z(gen));
            const std::int64_t dose = c == 2 ? 100663296 : 0;
            const auto spec = make_spec(id, campaign, vm, regime, rep, trip, study_name(c), dose, o.warmup_s,
                                        o.pressure_s, o.recovery_s, o.period_ms);
            const double stall = c == 0 ? 1.3 : c == 1 ? 1.1 : 1.0;
            w.schedule(id, vm, regime, rep, trip, study_name(c), dose, "completed");
            w.write(id, campaign, vm, regime, rep, trip, c, dose, "completed", o.accelerator, spec, mult, pattern,
                    o.warmup_s, o.pressure_s, o.recovery_s, o.period_ms, stall, 0.15, 1.2, 0, false, true,
                    c == 2 ? std::optional<double>(1.05) : std::nullopt);
          }
          for (const auto& a : o.extra_arms) {  // a k-arm campaign: the arms after the study's three
            const std::string id = fmt::format("{}-{}-{}-r{}-{}", campaign, vm, regime, rep, a.name);
            std::array<double, 2> mult;
            for (int k = 0; k < 2; ++k) mult[k] = std::exp(se + te + eff[k][0] + a.log_effect[k] + o.case_sd * z(gen));
            const std::int64_t dose = a.like == 2 ? 100663296 : 0;
            const auto spec = make_spec(id, campaign, vm, regime, rep, trip, a.name, dose, o.warmup_s, o.pressure_s,
                                        o.recovery_s, o.period_ms);
            w.schedule(id, vm, regime, rep, trip, a.name, dose, "completed");
            w.write(id, campaign, vm, regime, rep, trip, a.like, dose, "completed", o.accelerator, spec, mult, pattern,
                    o.warmup_s, o.pressure_s, o.recovery_s, o.period_ms, 1.0, 0.15, 1.2, 0, false, true,
                    a.like == 2 ? std::optional<double>(1.05) : std::nullopt, a.name);
          }
        }
        // Extra cases (not part of complete triplets): infra_failed records and missing schedule rows.
        const int rep = o.triplets_per_stratum + 1;
        const std::string trip = fmt::format("{}/{}/{}", vm, regime, rep);
        if (extra_failed > 0) {
          --extra_failed;
          const std::string id = fmt::format("{}-{}-{}-r{}-{}", campaign, vm, regime, rep, study_name(0));
          w.schedule(id, vm, regime, rep, trip, study_name(0), 0, "infra_failed");
          w.write(id, campaign, vm, regime, rep, trip, 0, 0, "infra_failed", o.accelerator,
                  make_spec(id, campaign, vm, regime, rep, trip, study_name(0), 0, o.warmup_s, o.pressure_s,
                            o.recovery_s, o.period_ms),
                  {1, 1}, pattern, o.warmup_s, o.pressure_s, o.recovery_s, o.period_ms, 1, 0, 0, 0, false, true);
        }
        if (extra_missing > 0) {
          --extra_missing;
          const std::string id = fmt::format("{}-{}-{}-r{}-{}", campaign, vm, regime, rep, study_name(1));
          w.schedule(id, vm, regime, rep, trip, study_name(1), 0, "pending");
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
          w.schedule(id, "vm0", regimes[i], 1, "", study_name(2), d.dose_bytes, "pending");
          continue;
        }
        const double dur = worst ? d.worst_duration_s : d.worst_duration_s * 0.5;
        const double ach = worst ? d.min_achieved_ratio : std::max(d.min_achieved_ratio, 1.1);
        w.schedule(id, "vm0", regimes[i], 1, "", study_name(2), d.dose_bytes, "completed");
        w.write(id, "pilot", "vm0", regimes[i], 1, "", 2, d.dose_bytes, "completed", "kvm",
                make_spec(id, "pilot", "vm0", regimes[i], 1, "", study_name(2), d.dose_bytes, 10, pressure_s, 10, 100),
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
          for (int c = 0; c < 3; ++c) {
            const std::string pair = fmt::format("{}/{}/{}/{}", vm, regime, rep, study_name(c));
            for (int vi = 0; vi < 2; ++vi) {
              const std::string id = fmt::format("{}-{}-{}-r{}-{}-{}", campaign, vm, regime, rep, study_name(c), variants[vi]);
              const std::string trip = fmt::format("{}/{}/{}/{}", vm, regime, rep, variants[vi]);
              const std::int64_t dose = c == 2 ? 100663296 : 0;
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
                      c == 2 ? std::optional<double>(1.05) : std::nullopt);
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
