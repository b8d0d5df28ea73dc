// Tables 5, 5b, 6 and the mechanism table: medians over cases (see case_medians.hpp).
#include "analysis/tables/case_medians.hpp"

#include "analysis/data/arms.hpp"
#include "analysis/data/study_facts.hpp"

#include <fmt/format.h>

#include <set>

namespace analysis {
namespace {

using nlohmann::json;

json med(const std::vector<std::optional<double>>& v) { return median_cell(v); }

// The mechanism table's study columns for an arm that does not carry a study arm's name.
constexpr const char* kNotInStudy = "not a study arm";

// Median latency in ms (tables and figures share the unit) of values in us.
json med_ms(const std::vector<std::optional<double>>& us) {
  std::vector<std::optional<double>> v;
  for (const auto& x : us) v.push_back(x ? std::optional<double>(*x / 1000.0) : std::nullopt);
  return median_cell(v);
}

// A value enters a descriptive median only from a case that measured it: a completed case
// without a recording error. A lost case has no trace and no telemetry (docs/PROTOCOL.md); it
// enters the p99 medians with its imputed value (as in Table 4) and nothing else.
bool measured(const CaseSummary& c) { return !c.lost() && c.usable; }
bool imputed_p99(const CaseSummary& c) { return c.lost() && c.usable; }

}  // namespace

Table table5(const std::vector<const CaseSummary*>& cases, const std::vector<std::string>& arms, const std::string& unit) {
  Table t{"table5_wake_service",
          "Table 5. Wake delay and service time: medians over cases of each case's pressure-phase quantiles "
          "(ms); deadline misses and requests summed over cases",
          {{"configuration", 0}, {"canary", 0}, {"cases (completed + lost)", 0, "cases"}, {"lost", 0},
           {"measured cases", 0}, {"wake p50 median (ms)", 2}, {"wake p99 median (ms)", 2},
           {"service p50 median (ms)", 2}, {"service p99 median (ms)", 2},
           {"response p99: cases (imputed)", 0, "response_p99_cases"}, {"response p99 median (ms)", 2},
           {"deadline misses, sum over measured cases", 0, "deadline_misses_sum"},
           {"requests, sum over measured cases", 0, "requests_sum"},
           {"flagged p99 (censored / imputed)", 0, "flagged_p99_censored_imputed"}}, {}, {}};
  for (const std::string& cf : arms)
    for (Canary k : {Canary::Compute, Canary::Sqlite}) {
      std::vector<std::optional<double>> w50, w99, s50, s99, r99;
      long long misses = 0, reqs = 0;
      int n = 0, lost = 0, meas = 0, censored = 0, imputed = 0;
      for (const auto* c : cases) {
        if (c->configuration != cf) continue;
        ++n;
        lost += c->lost();
        const auto& l = c->latency[static_cast<int>(k)];
        if (!l) continue;
        if (imputed_p99(*c)) {
          r99.push_back(l->p99_us);
          ++imputed;
          continue;
        }
        if (!measured(*c)) continue;
        ++meas;
        if (l->has_wake) {
          w50.push_back(l->wake_p50_us);
          w99.push_back(l->wake_p99_us);
          s50.push_back(l->service_p50_us);
          s99.push_back(l->service_p99_us);
        }
        r99.push_back(l->p99_us);
        censored += l->censored > 0;
        misses += static_cast<long long>(l->deadline_misses);
        reqs += static_cast<long long>(l->requests);
      }
      t.add({cf, canary_name(k), n, lost, meas, med_ms(w50), med_ms(w99), med_ms(s50), med_ms(s99),
             fmt::format("{} ({})", r99.size(), imputed), med_ms(r99), misses, reqs,
             fmt::format("{} / {}", censored, imputed)});
    }
  t.notes.push_back("Cases: every completed and lost case of the configuration (study: the 60 cases of each "
                    "configuration), whether or not its " + unit + " is complete. Each measured case (completed, no "
                    "recording error) contributes its pressure-phase p50/p99 per canary; the table shows the median "
                    "of those. A lost case has no trace: it enters the response p99 median with its imputed (worst "
                    "observed) p99, as in Table 4, and is left out of the wake, service, deadline-miss and request "
                    "columns (docs/PROTOCOL.md); the counts say how many cases each column holds. Wake delay = wake - "
                    "scheduled start; service = completion - wake; deadline miss = completion after the next "
                    "scheduled start (or censored). Requests whose scheduled start lies in the pressure phase. "
                    "Censored p99 = a lower bound (flagged column: measured cases with a censored p99 / lost cases "
                    "with an imputed p99); wake and service are from completed requests only.");
  return t;
}

Table table5_usage(const std::vector<const CaseSummary*>& cases, const std::vector<std::string>& arms) {
  Table t{"table5b_faults_context_switches",
          "Table 5b. Page faults and context switches of the canaries per configuration: per-case sums over the "
          "pressure-phase requests",
          {{"configuration", 0}, {"canary", 0}, {"cases (completed + lost)", 0, "cases"}, {"measured cases", 0},
           {"minor faults median", 0}, {"major faults median", 0}, {"voluntary switches median", 0},
           {"involuntary switches median", 0}, {"minor faults, sum", 0}, {"major faults, sum", 0},
           {"voluntary switches, sum", 0}, {"involuntary switches, sum", 0}}, {}, {}};
  for (const std::string& cf : arms)
    for (Canary k : {Canary::Compute, Canary::Sqlite}) {
      int n = 0, meas = 0;
      std::vector<std::optional<double>> v[4];
      long long sum[4] = {0, 0, 0, 0};
      for (const auto* c : cases) {
        if (c->configuration != cf) continue;
        ++n;
        const auto& u = c->usage[static_cast<int>(k)];
        if (!measured(*c) || !u) continue;
        ++meas;
        const std::int64_t x[4] = {u->minflt, u->majflt, u->nvcsw, u->nivcsw};
        for (int i = 0; i < 4; ++i) {
          v[i].push_back(static_cast<double>(x[i]));
          sum[i] += x[i];
        }
      }
      auto total = [&](int i) { return meas ? json(sum[i]) : json(kNotMeasured); };
      t.add({cf, canary_name(k), n, meas, med(v[0]), med(v[1]), med(v[2]), med(v[3]), total(0), total(1),
             total(2), total(3)});
    }
  t.notes.push_back("Study: each trace recorded faults and context switches. Per request the canary records its "
                    "thread's getrusage(RUSAGE_THREAD) deltas (canary_requests minflt, majflt, nvcsw, nivcsw); each "
                    "case contributes the sums over its pressure-phase requests. Major faults needed I/O (swap-in "
                    "from zram or the swapfile). Lost cases have no trace and are not in the measured cases.");
  return t;
}

Table table6(const std::vector<const CaseSummary*>& cases, const std::vector<std::string>& arms) {
  Table t{"table6_regime_medians", "Table 6. Median pressure-phase p99 per regime and configuration (descriptive, unpaired)",
          {{"regime", 0}, {"configuration", 0}, {"cases (completed + lost)", 0, "cases"},
           {"lost (p99 imputed)", 0, "lost_imputed"}, {"compute p99 median (ms)", 2}, {"sqlite p99 median (ms)", 2}},
          {}, {}};
  std::set<std::string> regimes;
  for (const auto* c : cases) regimes.insert(c->regime);
  for (const auto& rg : regimes)
    for (const std::string& cf : arms) {
      std::vector<std::optional<double>> a, b;
      int n = 0, lost = 0;
      for (const auto* c : cases) {
        if (c->regime != rg || c->configuration != cf) continue;
        ++n;
        lost += c->lost();
        if (!c->usable) continue;
        a.push_back(c->latency[0] ? std::optional<double>(c->latency[0]->p99_us) : std::nullopt);
        b.push_back(c->latency[1] ? std::optional<double>(c->latency[1]->p99_us) : std::nullopt);
      }
      t.add({rg, cf, n, lost, med_ms(a), med_ms(b)});
    }
  t.notes.push_back("Unpaired cell medians over every completed and lost case of the cell (study: 15 cases per cell); "
                    "a lost case enters with its imputed (worst observed) p99, as in Table 4; a case excluded for a "
                    "recording error is counted in the cases but not in the medians. The paired analysis in Table 4 "
                    "determines the primary conclusions (study).");
  return t;
}

namespace {

/// The mechanism table without rows or notes.
Table mechanism_frame() {
  return Table{"mechanism", "Mechanism: medians over cases of pressure-phase counters",
          {{"configuration", 0}, {"cases (completed + lost)", 0, "cases"}, {"measured cases", 0},
           {"bg PSI some stall (s)", 3}, {"bg PSI full stall (s)", 3},
           {"fg PSI some stall (s)", 3}, {"fg PSI full stall (s)", 3},
           {"system PSI some stall (s)", 3}, {"system PSI full stall (s)", 3}, {"bg CPU PSI some (s)", 3}, {"fg CPU PSI some (s)", 3},
           {"system CPU PSI some (s)", 3}, {"bg IO PSI some (s)", 3}, {"fg IO PSI some (s)", 3},
           {"system IO PSI some (s)", 3}, {"system IO PSI full (s)", 3},
           {"memory.reclaim write CPU (ms)", 1}, {"refaults", 0},
           {"swapfile used peak (MiB)", 1}, {"zram swap used peak (MiB)", 1},
           {"swapfile used before trigger peak (MiB)", 1}, {"swap-out (KiB)", 0}, {"zram orig peak (MiB)", 1},
           {"zram compr peak (MiB)", 1}, {"zram mem_used peak (MiB)", 1}, {"study: swap-out (KiB)", 0},
           {"study: refaults", 0}, {"study: PSI some, owner not stated (s)", 3},
           {"study: PSI full, owner not stated (s)", 3}}, {}, {}};
}

/// The mechanism row of arm `cf`: medians over its measured cases, the write CPU when it writes
/// memory.reclaim, and the study's medians beside a study arm.
std::vector<json> mechanism_row(const std::vector<const CaseSummary*>& cases, const TripletSet& ts, const std::string& cf) {
  std::vector<std::optional<double>> v[8], p[7], write_cpu, swp[3], mem[3];
  int n = 0, meas = 0;
  for (const auto* c : cases) {
    if (c->configuration != cf) continue;
    ++n;
    if (!measured(*c)) continue;
    ++meas;
    const auto& m = c->mech;
    v[0].push_back(m.bg_some_stall_s);
    v[1].push_back(m.bg_full_stall_s);
    v[2].push_back(m.fg_some_stall_s);
    mem[0].push_back(m.fg_full_stall_s);
    mem[1].push_back(m.sys_some_stall_s);
    mem[2].push_back(m.sys_full_stall_s);
    v[3].push_back(m.refaults);
    v[4].push_back(m.swapout_kib);
    v[5].push_back(m.zram_orig_peak_mib);
    v[6].push_back(m.zram_compr_peak_mib);
    v[7].push_back(m.zram_mem_used_peak_mib);
    const std::optional<double> psi[7] = {m.bg_cpu_some_s, m.fg_cpu_some_s, m.sys_cpu_some_s, m.bg_io_some_s,
                                          m.fg_io_some_s,  m.sys_io_some_s, m.sys_io_full_s};
    for (int i = 0; i < 7; ++i) p[i].push_back(psi[i]);
    swp[0].push_back(m.swapfile_used_peak_mib);
    swp[1].push_back(m.zram_swap_used_peak_mib);
    swp[2].push_back(m.swapfile_before_trigger_peak_mib);
    for (const auto& r : c->outcome.reclaim)
      if (r.write_cpu_us) write_cpu.push_back(*r.write_cpu_us / 1e3);
  }
  // The study's published medians beside the arm carrying the study's name (none for other arms).
  const int sp = study_arm_position(cf);
  auto study = [&](double StudyMechanism::*f) { return sp < 0 ? json(kNotInStudy) : num(kStudyMechanism[sp].*f); };
  bool wrote = is_family_treatment(ts, cf);
  for (const auto* c : cases)
    if (c->configuration == cf && !c->outcome.reclaim.empty()) wrote = true;
  return {cf, n, meas, med(v[0]), med(v[1]), med(v[2]), med(mem[0]), med(mem[1]), med(mem[2]), med(p[0]),
         med(p[1]), med(p[2]), med(p[3]),
         med(p[4]), med(p[5]), med(p[6]),
         wrote ? median_cell(write_cpu, kNotMeasured) : json("no write"), med(v[3]),
         median_cell(swp[0], "not active"), median_cell(swp[1], "not active"),
         median_cell(swp[2], "not active"), med(v[4]), med(v[5]), med(v[6]),
         med(v[7]), study(&StudyMechanism::swapout_kib), study(&StudyMechanism::refaults),
         study(&StudyMechanism::some_s), study(&StudyMechanism::full_s)};
}

/// The mechanism table's notes: what each column measures, and whose PSI the study reports.
void mechanism_notes(Table& t) {
  t.notes.push_back("Cases: every completed and lost case of the configuration (study: 60 per configuration). Stall = "
                    "difference of cumulative memory.pressure totals between the first and last 1 Hz sample "
                    "of the pressure phase, for memory.pressure (bg, fg) and /proc/pressure/memory (system), and "
                    "likewise for cpu.pressure and io.pressure "
                    "(bg, fg) and /proc/pressure/cpu, /proc/pressure/io (system), so a latency difference can be "
                    "told apart as a memory stall, CPU contention on the vCPU (zram compression and reclaim run "
                    "there) or I/O wait on the swapfile; memory.reclaim write CPU = CPU time of the writing "
                    "thread during write(2) (CLOCK_THREAD_CPUTIME_ID), median over the writes; swapfile / zram swap "
                    "used = maximum of the device's /proc/swaps Used column (telemetry) in the pressure phase, "
                    "and for the swapfile also before the trigger (would_trigger for static-zram): where "
                    "pressure went; in delayed-activation the swapfile before the trigger is the campaign's "
                    "backend.delayed_swapfile (docs/CAMPAIGN.md); not active = the device had no /proc/swaps "
                    "row in any sample; refaults = bg+fg workingset_refault_anon+file delta; swap-out = pswpout "
                    "delta x page size; zram = maximum of mm_stat columns in the phase. Medians over the measured "
                    "cases: a lost case has no telemetry (excluded, the difference between the two counts), as has a "
                    "case excluded for a recording error; n/a = not sampled. Study columns: the study's published "
                    "medians (60 cases per configuration), not computed from this campaign.");
  t.notes.push_back("Whose PSI: the study reports \"median accumulated some stall time and full stall time\" without "
                    "saying of which group (bg, fg) or of the whole system, so its columns are labelled owner not "
                    "stated and this campaign's bg, fg and system stall stand beside them (`harness compare "
                    "--published`, table published_stall). Here bg holds one task (pressure-gen), so bg full "
                    "equals bg some whenever it stalls. The study's full is below its some (1.114 vs 1.342 s with "
                    "bounded reclaim): that fits a group with more than one task at times (a bg with several "
                    "tasks, fg with its two canaries, or the whole system); a conjecture, the study says none of "
                    "this (campaigns/README.md, Table 1).");
}

}  // namespace

Table mechanism(const std::vector<const CaseSummary*>& cases, const TripletSet& ts) {
  Table t = mechanism_frame();
  for (const std::string& cf : ts.arms) t.add(mechanism_row(cases, ts, cf));
  mechanism_notes(t);
  return t;
}

}  // namespace analysis
