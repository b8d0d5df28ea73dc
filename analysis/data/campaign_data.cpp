// Campaign DB loading (see campaign_data.hpp).
#include "analysis/data/campaign_data.hpp"

#include "analysis/data/case_memory.hpp"
#include "analysis/data/arms.hpp"
#include "harness/json/limited_parse.hpp"

#include "results/db.hpp"
#include "results/store/canary_requests.hpp"
#include "results/store/case_queries.hpp"
#include "results/store/cases.hpp"
#include "results/store/meta.hpp"
#include "results/store/phases.hpp"
#include "results/store/schedule.hpp"
#include "results/store/telemetry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <cmath>
#include <map>
#include <set>

namespace analysis {
namespace {

/// Case `case_id`'s requests of `canary` in seq order into `out` (cleared; its capacity is
/// reused from case to case, so 2 M records cost no reallocation per case). With `usage`,
/// also sums the getrusage deltas (minflt, majflt, nvcsw, nivcsw) of the requests scheduled
/// in [start_ns, end_ns) into it (nullopt when none of them carries them).
void read_requests(results::Db& db, const std::string& case_id, Canary canary, std::vector<RawRequest>& out,
                   std::optional<RequestUsage>* usage = nullptr, std::int64_t start_ns = 0, std::int64_t end_ns = 0) {
  out.clear();
  if (usage) usage->reset();
  results::for_each_canary_request(db, case_id, canary_name(canary), [&](const results::CanaryRequestRow& r) {
    out.push_back({r.seq, r.scheduled_ns, r.wake_ns, r.completion_ns});
    if (!usage || r.scheduled_ns < start_ns || r.scheduled_ns >= end_ns || !r.minflt) return;
    if (!*usage) *usage = RequestUsage{};
    auto& u = **usage;
    ++u.requests;
    u.minflt += *r.minflt;
    u.majflt += r.majflt.value_or(0);
    u.nvcsw += r.nvcsw.value_or(0);
    u.nivcsw += r.nivcsw.value_or(0);
  });
}

// Cumulative counter delta between the first and last non-NULL sample (t_ns ascending).
struct Series {
  std::optional<double> first, last, peak;
  void add(std::optional<std::int64_t> v) {
    if (!v) return;
    const double d = static_cast<double>(*v);
    if (!first) first = d;
    last = d;
    peak = peak ? std::max(*peak, d) : d;
  }
  int n = 0;
};

/// The pressure phase's counters of the mechanism and of an arm's costs (Series of cumulative
/// counters and peaks, fed one sample of the window at a time; a column the DB's schema version
/// lacks reads nullopt: cpu/io PSI version 4, reclaim CPU version 8).
struct PressureSeries {
  Series bs, bf, fs, ff, ss, sf, refault, swp, zo, zc, zm, oom;
  Series psi[7], sw, zsw, sw_before, pgsteal, cpu[5];
  int samples = 0;
  void add(const results::TelemetryRow& t, std::optional<std::int64_t> trigger_ns) {
    ++samples;
    bs.add(t.bg_some_us);
    bf.add(t.bg_full_us);
    fs.add(t.fg_some_us);
    ff.add(t.fg_full_us);
    // Refaults: sum of the four counters when all present in this sample.
    auto a = t.bg_workingset_refault_anon, b = t.bg_workingset_refault_file, cc = t.fg_workingset_refault_anon,
         d = t.fg_workingset_refault_file;
    if (a && b && cc && d) refault.add(*a + *b + *cc + *d);
    else if (a && b) refault.add(*a + *b);
    swp.add(t.pswpout);
    zo.add(t.zram_orig_data_bytes);
    zc.add(t.zram_compr_data_bytes);
    zm.add(t.zram_mem_used_bytes);
    auto k1 = t.bg_oom_kill, k2 = t.fg_oom_kill;
    if (k1 || k2) oom.add(k1.value_or(0) + k2.value_or(0));
    const results::TelemetryRow::Opt kPsi[7] = {t.bg_cpu_some_us, t.fg_cpu_some_us, t.sys_cpu_some_us, t.bg_io_some_us,
                                                t.fg_io_some_us,  t.sys_io_some_us, t.sys_io_full_us};
    for (int i = 0; i < 7; ++i) psi[i].add(kPsi[i]);
    sw.add(t.swapfile_used_kib);
    zsw.add(t.zram_swap_used_kib);
    ss.add(t.sys_some_us);
    sf.add(t.sys_full_us);
    if (trigger_ns && t.t_ns < *trigger_ns) sw_before.add(t.swapfile_used_kib);
    pgsteal.add(t.bg_pgsteal);
    const results::TelemetryRow::Opt kCpu[5] = {t.kswapd_cpu_us, t.bg_cpu_usage_us, t.bg_cpu_system_us,
                                                t.fg_cpu_usage_us, t.fg_cpu_system_us};
    for (int i = 0; i < 5; ++i) cpu[i].add(kCpu[i]);
  }
};

/// The Mechanism of the pressure phase's series; `page_size_bytes` for the page counters.
Mechanism mechanism_of(const PressureSeries& p, std::int64_t page_size_bytes) {
  Mechanism m;
  auto delta = [&](const Series& s, double scale) -> std::optional<double> {
    if (p.samples < 2 || !s.first) return std::nullopt;
    return (*s.last - *s.first) * scale;
  };
  m.bg_some_stall_s = delta(p.bs, 1e-6);
  m.bg_full_stall_s = delta(p.bf, 1e-6);
  m.fg_some_stall_s = delta(p.fs, 1e-6);
  m.fg_full_stall_s = delta(p.ff, 1e-6);
  m.sys_some_stall_s = delta(p.ss, 1e-6);
  m.sys_full_stall_s = delta(p.sf, 1e-6);
  m.refaults = delta(p.refault, 1.0);
  m.swapout_kib = delta(p.swp, static_cast<double>(page_size_bytes) / 1024.0);
  m.oom_kills = delta(p.oom, 1.0);
  std::optional<double>* psi[7] = {&m.bg_cpu_some_s, &m.fg_cpu_some_s, &m.sys_cpu_some_s, &m.bg_io_some_s,
                                   &m.fg_io_some_s,  &m.sys_io_some_s, &m.sys_io_full_s};
  for (int i = 0; i < 7; ++i) *psi[i] = delta(p.psi[i], 1e-6);
  if (p.sw.peak) m.swapfile_used_peak_mib = *p.sw.peak / 1024.0;
  if (p.zsw.peak) m.zram_swap_used_peak_mib = *p.zsw.peak / 1024.0;
  if (p.sw_before.peak) m.swapfile_before_trigger_peak_mib = *p.sw_before.peak / 1024.0;
  constexpr double mib = 1.0 / (1024.0 * 1024.0);
  if (p.zo.peak) m.zram_orig_peak_mib = *p.zo.peak * mib;
  if (p.zc.peak) m.zram_compr_peak_mib = *p.zc.peak * mib;
  if (p.zm.peak) m.zram_mem_used_peak_mib = *p.zm.peak * mib;
  m.bg_pgsteal_mib = delta(p.pgsteal, static_cast<double>(page_size_bytes) * mib);
  std::optional<double>* cpu[5] = {&m.kswapd_cpu_ms, &m.bg_cpu_usage_ms, &m.bg_cpu_system_ms, &m.fg_cpu_usage_ms,
                                   &m.fg_cpu_system_ms};
  for (int i = 0; i < 5; ++i) *cpu[i] = delta(p.cpu[i], 1e-3);
  return m;
}

Mechanism read_mechanism(results::Db& db, const CaseSummary& c) {
  PressureSeries p;
  std::vector<MemorySample> memory;  // every phase: what the arm bought (arm_effects.hpp)
  std::optional<std::int64_t> trigger_ns;  // the trigger (or would_trigger) tick
  if (c.outcome.trigger_delay_s) trigger_ns = c.pressure_start_ns + std::llround(*c.outcome.trigger_delay_s * 1e9);
  results::for_each_telemetry(db, c.case_id, std::nullopt, [&](const results::TelemetryRow& t) {
    memory.push_back({t.t_ns, phase_index(t.phase.value_or("")), t.bg_current_bytes, t.zram_mem_used_bytes,
                      t.swapfile_used_kib});
    if (t.t_ns >= c.pressure_start_ns && t.t_ns <= c.pressure_end_ns) p.add(t, trigger_ns);  // the mechanism's window
  });
  Mechanism m = mechanism_of(p, c.page_size_bytes);
  m.phase_memory = phase_memory(memory);
  m.dram_held_avg_mib = dram_held_average(memory, 1);
  return m;
}

}  // namespace

std::vector<RawRequest> load_requests(const std::string& db_path, const std::string& case_id, Canary canary) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  std::vector<RawRequest> out;
  read_requests(db, case_id, canary, out);
  return out;
}

// Worst-observed imputation of lost cases (docs/PROTOCOL.md assumption; see campaign_data.hpp).
void impute_lost(CampaignData& out) {
  for (Canary k : {Canary::Compute, Canary::Sqlite}) {
    const int ki = static_cast<int>(k);
    std::optional<double> p50, p95, p99;
    for (const auto& c : out.cases) {
      if (c.lost() || !c.usable || !c.latency[ki]) continue;
      const auto& l = *c.latency[ki];
      p50 = std::max(p50.value_or(l.p50_us), l.p50_us);
      p95 = std::max(p95.value_or(l.p95_us), l.p95_us);
      p99 = std::max(p99.value_or(l.p99_us), l.p99_us);
    }
    for (auto& c : out.cases) {
      if (!c.lost()) continue;
      if (!p99) {
        c.usable = false;
        c.excluded_because = fmt::format("lost case: no completed case has a {} p99 to impute from", canary_name(k));
        continue;
      }
      LatencySummary l;
      l.imputed = true;
      l.p50_us = *p50;
      l.p95_us = *p95;
      l.p99_us = *p99;
      c.latency[ki] = l;
    }
  }
}

namespace {

/// The spec field canaries.<key> when it is a number, else nullopt.
std::optional<double> spec_canaries_number(const nlohmann::json& spec, const char* key) {
  if (spec.is_object() && spec.contains("canaries") && spec["canaries"].contains(key) &&
      spec["canaries"][key].is_number())
    return spec["canaries"][key].get<double>();
  return std::nullopt;
}

/// Marks `c` as not usable because of `why`, with a warning naming the case.
void exclude_case(CaseSummary& c, std::string why, std::vector<std::string>& warnings) {
  c.usable = false;
  c.excluded_because = why;
  warnings.push_back(fmt::format("case {} excluded: {}", c.case_id, why));
}

/// The columns of case row `row` into a new summary: ids, status, arm, build and outcome_json (a
/// warning when it is not JSON), the spec (excluded when it is not).
CaseSummary read_case_columns(const results::CaseRow& row, std::vector<std::string>& warnings) {
  CaseSummary c;
  c.case_id = row.case_id;
  c.status = row.status;
  c.campaign = row.campaign;
  c.vm = row.vm;
  c.regime = row.regime;
  c.repeat = row.repeat;
  c.triplet_id = row.triplet_id.value_or("");  // NULL: pilot case, not part of a triplet
  c.configuration = row.configuration;  // the arm name (schema version 6: an `arms` row when the table has rows)
  c.dose_bytes = row.dose_bytes;
  c.accelerator = row.accelerator.value_or("unknown");
  c.kernel_release = row.kernel_release.value_or("");
  c.page_size_bytes = row.page_size_bytes.value_or(4096);
  if (row.outcome_json) c.outcome_json = harness::json::parse_or_discarded(*row.outcome_json);
  if (c.outcome_json.is_discarded()) {
    warnings.push_back(fmt::format("case {}: cases.outcome_json is not valid JSON (its outcome fields: not measured)", c.case_id));
    c.outcome_json = nullptr;
  }
  try {
    c.spec = harness::json::parse(row.spec_json, "cases.spec_json");
  } catch (const std::exception& e) {
    if (!c.lost()) exclude_case(c, fmt::format("cases.spec_json is not valid JSON ({})", e.what()), warnings);
  }
  return c;
}

/// Phase name -> (start_ns, end_ns) of case `case_id` (table phases).
using PhaseTimes = std::map<std::string, std::pair<std::int64_t, std::optional<std::int64_t>>>;
PhaseTimes read_phase_times(results::Db& db, const std::string& case_id) {
  PhaseTimes phases;
  for (const auto& p : results::read_phases(db, case_id)) phases[p.phase] = {p.start_ns, p.end_ns};
  return phases;
}

/// The pressure window of `c` (its start and end set): the canary period from the spec (100 ms
/// when absent) and the observation end, the restoration start or else the latest phase end
/// (`no_restoration` set).
PhaseWindow pressure_window(const CaseSummary& c, const PhaseTimes& phases, bool& no_restoration) {
  PhaseWindow w;
  w.start_ns = c.pressure_start_ns;
  w.end_ns = c.pressure_end_ns;
  w.period_ns = 100'000'000;
  if (auto p = spec_canaries_number(c.spec, "period_ms")) w.period_ns = static_cast<std::int64_t>(*p * 1e6);
  if (auto r = phases.find("restoration"); r != phases.end()) {
    w.observation_end_ns = r->second.first;
  } else {
    no_restoration = true;
    w.observation_end_ns = c.pressure_end_ns;
    for (const auto& [name, se] : phases) w.observation_end_ns = std::max(w.observation_end_ns, se.second.value_or(se.first));
  }
  return w;
}

/// Both canaries' pressure-phase latency of `c` over `w` (origin: the warmup's start, the SQLite
/// canary's offset added); a request with response <= 0 excludes the case, censored ones warn.
void summarize_latency(results::Db& db, CaseSummary& c, const PhaseTimes& phases, PhaseWindow w,
                       std::vector<RawRequest>& reqs, std::vector<std::string>& warnings) {
  const auto wit = phases.find("warmup");
  const std::int64_t t0 = wit != phases.end() ? wit->second.first : c.pressure_start_ns;
  for (Canary k : {Canary::Compute, Canary::Sqlite}) {
    read_requests(db, c.case_id, k, reqs, &c.usage[static_cast<int>(k)], w.start_ns, w.end_ns);
    w.origin_ns = t0;
    if (k == Canary::Sqlite)
      if (auto off = spec_canaries_number(c.spec, "sqlite_offset_ms")) w.origin_ns += static_cast<std::int64_t>(*off * 1e6);
    try {
      auto s = summarize_requests(reqs, w);
      if (s.nonpositive > 0 && c.usable)
        exclude_case(c,
                     fmt::format("canary {}: {} request(s) with response <= 0 (first seq {}): completion_ns <= scheduled_ns",
                                 canary_name(k), s.nonpositive, s.first_nonpositive_seq),
                     warnings);
      if (s.censored > 0)
        warnings.push_back(fmt::format(
            "case {} canary {}: {} of {} pressure-phase request(s) censored ({} never completed, {} missing from "
            "a truncated trace): each enters the p99 as the lower bound restoration start - scheduled start; the "
            "case's p99 is a lower bound",
            c.case_id, canary_name(k), s.censored, s.requests, s.incomplete, s.missing));
      c.latency[static_cast<int>(k)] = s;
    } catch (const std::invalid_argument& e) {
      warnings.push_back(fmt::format("case {} canary {}: {}", c.case_id, canary_name(k), e.what()));
    }
  }
}

/// Summarises the completed or lost case of row `row`. A lost case gets no latency here (imputed
/// once every completed case is known). Loading problems are appended to `warnings`;
/// `no_restoration` is set when the observation end had to fall back to the latest phase end.
CaseSummary summarize_row(results::Db& db, const results::CaseRow& row, std::vector<RawRequest>& reqs,
                          std::vector<std::string>& warnings, bool& no_restoration) {
  CaseSummary c = read_case_columns(row, warnings);
  const PhaseTimes phases = read_phase_times(db, c.case_id);
  const auto pit = phases.find("pressure");
  if (pit != phases.end()) c.pressure_start_ns = pit->second.first;
  c.outcome = load_case_outcome(db, c.case_id, c.outcome_json,
                                pit != phases.end() ? std::optional<std::int64_t>(pit->second.first) : std::nullopt);
  if (c.lost()) return c;  // no trace: latency imputed once every completed case is known
  if (pit == phases.end() || !pit->second.second) {
    if (c.usable) exclude_case(c, "no pressure phase with start_ns and end_ns in table phases", warnings);
    return c;
  }
  c.pressure_end_ns = *pit->second.second;
  summarize_latency(db, c, phases, pressure_window(c, phases, no_restoration), reqs, warnings);
  c.mech = read_mechanism(db, c);
  return c;
}

}  // namespace

std::optional<CaseSummary> load_case(results::Db& db, const std::string& case_id, std::vector<std::string>& warnings) {
  const auto row = results::read_case(db, case_id);
  if (!row) return std::nullopt;
  if (row->status != "completed" && row->status != "lost") return std::nullopt;
  std::vector<RawRequest> reqs;
  bool no_restoration = false;
  auto c = summarize_row(db, *row, reqs, warnings, no_restoration);
  if (no_restoration)
    warnings.push_back(fmt::format("case {} has no restoration phase: censored requests use the latest phase end as "
                                   "observation end (assumption)", case_id));
  return c;
}

namespace {

/// The DB's cases in case_id order: every id into `known`, the completed and lost ones returned,
/// the others (infra_failed) into `infra_failed`.
std::vector<std::string> list_cases(results::Db& db, std::set<std::string>& known, std::vector<std::string>& infra_failed) {
  std::vector<std::string> ids;
  for (auto& [id, status] : results::case_statuses(db)) {
    known.insert(id);
    if (status != "completed" && status != "lost")
      infra_failed.push_back(id);
    else
      ids.push_back(id);
  }
  return ids;
}

/// One case's summary and the warnings its loading gave.
struct CaseSlot {
  std::optional<CaseSummary> c;
  std::vector<std::string> warnings;
  bool no_restoration = false;
};

/// summarize_row of every case in `ids`, on `threads` connections (0: up to 4, one per core;
/// at most one per 8 cases); `db` is the first. Each case is summarised on its own: workers take
/// the next index, and the slots are in the order of `ids` (the same for any thread count). The
/// first failure of any worker is rethrown.
std::vector<CaseSlot> summarize_cases(results::Db& db, const std::string& db_path, const std::vector<std::string>& ids,
                                      unsigned threads) {
  std::vector<CaseSlot> slots(ids.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mu;
  auto work = [&](results::Db& conn) {
    try {
      results::CaseReader cases(conn);
      std::vector<RawRequest> reqs;
      for (std::size_t i = next++; i < ids.size(); i = next++) {
        const auto row = cases.get(ids[i]);
        if (!row) throw results::DbError(db_path + ": case " + ids[i] + " vanished while it was read");
        slots[i].c = summarize_row(conn, *row, reqs, slots[i].warnings, slots[i].no_restoration);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mu);
      if (!failure) failure = std::current_exception();
      next = ids.size();
    }
  };
  if (threads == 0) threads = std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(1, ids.size() / 8)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back([&] {
      std::unique_ptr<results::Db> conn;
      try {
        conn = std::make_unique<results::Db>(db_path, results::Db::Mode::ReadOnly);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mu);
        if (!failure) failure = std::current_exception();
        return;
      }
      work(*conn);
    });
  work(db);
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return slots;
}

/// The slots' cases and warnings into `out`, in order, and one warning counting the completed
/// cases without a restoration phase.
void gather_cases(std::vector<CaseSlot>& slots, CampaignData& out) {
  int no_restoration = 0;
  for (auto& s : slots) {
    out.cases.push_back(std::move(*s.c));
    out.warnings.insert(out.warnings.end(), s.warnings.begin(), s.warnings.end());
    no_restoration += s.no_restoration;
  }
  if (no_restoration > 0)
    out.warnings.push_back(fmt::format(
        "{} completed case(s) have no restoration phase: censored requests use the latest phase end as observation "
        "end (assumption; docs/PROTOCOL.md uses the restoration start)", no_restoration));
}

/// The schedule (when the DB has one) into out.schedule, in plan order; a scheduled case not in
/// `known` into out.missing.
void read_schedule(results::Db& db, const std::set<std::string>& known, CampaignData& out) {
  if (!has_table(db, "schedule")) return;
  for (auto& r : results::read_schedule(db)) {
    ScheduledCase s{r.case_id, r.vm, r.regime, r.triplet_id.value_or(""), r.configuration, r.state, r.repeat};
    if (!known.count(s.case_id)) out.missing.push_back(s.case_id);
    out.schedule.push_back(std::move(s));
  }
}

/// The declared family of comparisons and the arms (analysis/data/arms.hpp) of the cases and the schedule.
void read_comparisons_and_arms(results::Db& db, CampaignData& out) {
  const auto family = declared_comparisons(out.meta, out.warnings);
  out.comparisons = family.comparisons;
  out.comparisons_source = family.source;
  std::vector<std::string> configurations = results::case_configurations(db);
  for (const auto& s : out.schedule) configurations.push_back(s.configuration);
  out.arms = load_arms(db, configurations, out.comparisons, out.arms_recorded);
}

}  // namespace

CampaignData load_campaign(const std::string& db_path, unsigned threads) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  CampaignData out;
  out.db_path = db_path;
  out.meta = results::meta_map(db);
  std::set<std::string> known;
  const std::vector<std::string> ids = list_cases(db, known, out.infra_failed);  // completed and lost cases
  std::vector<CaseSlot> slots = summarize_cases(db, db_path, ids, threads);
  gather_cases(slots, out);
  impute_lost(out);
  read_schedule(db, known, out);
  out.attempts = load_attempts(db);
  read_comparisons_and_arms(db, out);
  return out;
}

}  // namespace analysis
