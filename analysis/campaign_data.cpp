// Campaign DB loading (see campaign_data.hpp).
#include "analysis/campaign_data.hpp"

#include "analysis/arms.hpp"
#include "harness/json/limited_parse.hpp"

#include "results/db.hpp"

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
  results::Stmt st(db,
                   "SELECT seq, scheduled_ns, wake_ns, completion_ns, minflt, majflt, nvcsw, nivcsw FROM canary_requests "
                   "WHERE case_id = ?1 AND canary = ?2 ORDER BY seq");
  st.bind(1, case_id).bind(2, canary_name(canary));
  out.clear();
  if (usage) usage->reset();
  while (st.step()) {
    out.push_back({st.int64(0), st.int64(1), st.opt_int64(2), st.opt_int64(3)});
    if (!usage || out.back().scheduled_ns < start_ns || out.back().scheduled_ns >= end_ns || st.is_null(4)) continue;
    if (!*usage) *usage = RequestUsage{};
    auto& u = **usage;
    ++u.requests;
    u.minflt += st.int64(4);
    u.majflt += st.opt_int64(5).value_or(0);
    u.nvcsw += st.opt_int64(6).value_or(0);
    u.nivcsw += st.opt_int64(7).value_or(0);
  }
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

Mechanism read_mechanism(results::Db& db, const CaseSummary& c) {
  // cpu/io PSI columns (schema version 4): NULL when the DB predates them.
  static const char* kPsi[] = {"bg_cpu_some_us", "fg_cpu_some_us", "sys_cpu_some_us", "bg_io_some_us",
                               "fg_io_some_us",  "sys_io_some_us", "sys_io_full_us"};
  const bool v4 = has_column(db, "telemetry", "bg_cpu_some_us");
  std::string psi_cols;
  for (const char* k : kPsi) psi_cols += std::string(", ") + (v4 ? k : "NULL");
  results::Stmt st(db,
                   "SELECT bg_some_us, bg_full_us, fg_some_us, fg_full_us, "
                   "bg_workingset_refault_anon, bg_workingset_refault_file, "
                   "fg_workingset_refault_anon, fg_workingset_refault_file, pswpout, "
                   "zram_orig_data_bytes, zram_compr_data_bytes, zram_mem_used_bytes, "
                   "bg_oom_kill, fg_oom_kill" + psi_cols + ", t_ns, swapfile_used_kib, zram_swap_used_kib, "
                   "sys_some_us, sys_full_us FROM telemetry "
                   "WHERE case_id = ?1 AND t_ns >= ?2 AND t_ns <= ?3 ORDER BY t_ns");
  st.bind(1, c.case_id).bind(2, c.pressure_start_ns).bind(3, c.pressure_end_ns);
  Series bs, bf, fs, ff, ss, sf, refault, swp, zo, zc, zm, oom;
  Series psi[7], sw, zsw, sw_before;
  std::optional<std::int64_t> trigger_ns;  // the trigger (or would_trigger) tick
  if (c.outcome.trigger_delay_s) trigger_ns = c.pressure_start_ns + std::llround(*c.outcome.trigger_delay_s * 1e9);
  int samples = 0;
  while (st.step()) {
    ++samples;
    bs.add(st.opt_int64(0));
    bf.add(st.opt_int64(1));
    fs.add(st.opt_int64(2));
    ff.add(st.opt_int64(3));
    // Refaults: sum of the four counters when all present in this sample.
    auto a = st.opt_int64(4), b = st.opt_int64(5), cc = st.opt_int64(6), d = st.opt_int64(7);
    if (a && b && cc && d) refault.add(*a + *b + *cc + *d);
    else if (a && b) refault.add(*a + *b);
    swp.add(st.opt_int64(8));
    zo.add(st.opt_int64(9));
    zc.add(st.opt_int64(10));
    zm.add(st.opt_int64(11));
    auto k1 = st.opt_int64(12), k2 = st.opt_int64(13);
    if (k1 || k2) oom.add(k1.value_or(0) + k2.value_or(0));
    for (int i = 0; i < 7; ++i) psi[i].add(st.opt_int64(14 + i));
    const auto t = st.int64(21);
    const auto swapfile = st.opt_int64(22);
    sw.add(swapfile);
    zsw.add(st.opt_int64(23));
    ss.add(st.opt_int64(24));
    sf.add(st.opt_int64(25));
    if (trigger_ns && t < *trigger_ns) sw_before.add(swapfile);
  }
  Mechanism m;
  auto delta = [&](const Series& s, double scale) -> std::optional<double> {
    if (samples < 2 || !s.first) return std::nullopt;
    return (*s.last - *s.first) * scale;
  };
  m.bg_some_stall_s = delta(bs, 1e-6);
  m.bg_full_stall_s = delta(bf, 1e-6);
  m.fg_some_stall_s = delta(fs, 1e-6);
  m.fg_full_stall_s = delta(ff, 1e-6);
  m.sys_some_stall_s = delta(ss, 1e-6);
  m.sys_full_stall_s = delta(sf, 1e-6);
  m.refaults = delta(refault, 1.0);
  m.swapout_kib = delta(swp, static_cast<double>(c.page_size_bytes) / 1024.0);
  m.oom_kills = delta(oom, 1.0);
  m.bg_cpu_some_s = delta(psi[0], 1e-6);
  m.fg_cpu_some_s = delta(psi[1], 1e-6);
  m.sys_cpu_some_s = delta(psi[2], 1e-6);
  m.bg_io_some_s = delta(psi[3], 1e-6);
  m.fg_io_some_s = delta(psi[4], 1e-6);
  m.sys_io_some_s = delta(psi[5], 1e-6);
  m.sys_io_full_s = delta(psi[6], 1e-6);
  if (sw.peak) m.swapfile_used_peak_mib = *sw.peak / 1024.0;
  if (zsw.peak) m.zram_swap_used_peak_mib = *zsw.peak / 1024.0;
  if (sw_before.peak) m.swapfile_before_trigger_peak_mib = *sw_before.peak / 1024.0;
  constexpr double mib = 1.0 / (1024.0 * 1024.0);
  if (zo.peak) m.zram_orig_peak_mib = *zo.peak * mib;
  if (zc.peak) m.zram_compr_peak_mib = *zc.peak * mib;
  if (zm.peak) m.zram_mem_used_peak_mib = *zm.peak * mib;
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

constexpr const char* kCaseSelect =
    "SELECT case_id, campaign, vm, regime, repeat, triplet_id, configuration, dose_bytes, status, accelerator, "
    "kernel_release, page_size_bytes, spec_json, outcome_json FROM cases";

/// Marks `c` excluded from the paired analysis for `why`, with a warning.
void exclude_case(CaseSummary& c, std::vector<std::string>& warnings, const std::string& why) {
  c.usable = false;
  c.excluded_because = why;
  warnings.push_back(fmt::format("case {} excluded: {}", c.case_id, why));
}

/// The columns of the current row of `cs` (kCaseSelect) into `c`: identity, what ran it, the
/// outcome and the spec (an unreadable spec excludes a completed case).
void read_case_row(results::Stmt& cs, CaseSummary& c, std::vector<std::string>& warnings) {
  c.case_id = cs.text(0);
  c.status = cs.text(8);
  c.campaign = cs.text(1);
  c.vm = cs.text(2);
  c.regime = cs.text(3);
  c.repeat = cs.int64(4);
  c.triplet_id = cs.opt_text(5).value_or("");  // NULL: pilot case, not part of a triplet
  c.configuration = cs.text(6);  // the arm name (schema version 6: an `arms` row when the table has rows)
  c.dose_bytes = cs.opt_int64(7);
  c.accelerator = cs.opt_text(9).value_or("unknown");
  c.kernel_release = cs.opt_text(10).value_or("");
  c.page_size_bytes = cs.opt_int64(11).value_or(4096);
  if (auto oj = cs.opt_text(13)) c.outcome_json = harness::json::parse_or_discarded(*oj);
  if (c.outcome_json.is_discarded()) {
    warnings.push_back(fmt::format("case {}: cases.outcome_json is not valid JSON (its outcome fields: not measured)", c.case_id));
    c.outcome_json = nullptr;
  }
  try {
    c.spec = harness::json::parse(cs.text(12), "cases.spec_json");
  } catch (const std::exception& e) {
    if (!c.lost()) exclude_case(c, warnings, fmt::format("cases.spec_json is not valid JSON ({})", e.what()));
  }
}

/// The spec's canaries.<key> in ms as ns, `def` when absent.
std::int64_t spec_canary_ns(const nlohmann::json& spec, const char* key, std::int64_t def) {
  if (spec.is_object() && spec.contains("canaries") && spec["canaries"].contains(key) && spec["canaries"][key].is_number())
    return static_cast<std::int64_t>(spec["canaries"][key].get<double>() * 1e6);
  return def;
}

/// phase -> (start_ns, end_ns) of the case (table phases).
using CasePhases = std::map<std::string, std::pair<std::int64_t, std::optional<std::int64_t>>>;

CasePhases case_phases(results::Db& db, const std::string& case_id) {
  CasePhases phases;
  results::Stmt ph(db, "SELECT phase, start_ns, end_ns FROM phases WHERE case_id = ?1");
  ph.bind(1, case_id);
  while (ph.step()) phases[ph.text(0)] = {ph.int64(1), ph.opt_int64(2)};
  return phases;
}

/// Each canary's latency summary over the pressure window `w` (origin: the warmup start `t0`,
/// the SQLite canary's offset added); a response <= 0 excludes the case, censored requests and
/// unreadable traces are warnings.
void summarize_canaries(results::Db& db, CaseSummary& c, std::vector<RawRequest>& reqs, PhaseWindow w, std::int64_t t0,
                        std::vector<std::string>& warnings) {
  for (Canary k : {Canary::Compute, Canary::Sqlite}) {
    read_requests(db, c.case_id, k, reqs, &c.usage[static_cast<int>(k)], w.start_ns, w.end_ns);
    w.origin_ns = t0;
    if (k == Canary::Sqlite) w.origin_ns += spec_canary_ns(c.spec, "sqlite_offset_ms", 0);
    try {
      auto s = summarize_requests(reqs, w);
      if (s.nonpositive > 0 && c.usable)
        exclude_case(c, warnings,
                     fmt::format("canary {}: {} request(s) with response <= 0 (first seq {}): completion_ns <= scheduled_ns",
                                 canary_name(k), s.nonpositive, s.first_nonpositive_seq));
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

/// Summarises the completed or lost case at the current row of `cs` (kCaseSelect). A lost case
/// gets no latency here (imputed once every completed case is known). Loading problems are
/// appended to `warnings`; `no_restoration` is set when the observation end had to fall back
/// to the latest phase end.
CaseSummary summarize_row(results::Db& db, results::Stmt& cs, std::vector<RawRequest>& reqs,
                          std::vector<std::string>& warnings, bool& no_restoration) {
  CaseSummary c;
  read_case_row(cs, c, warnings);
  const std::int64_t period_ns = spec_canary_ns(c.spec, "period_ms", 100'000'000);
  const CasePhases phases = case_phases(db, c.case_id);
  const auto pit = phases.find("pressure");
  if (pit != phases.end()) c.pressure_start_ns = pit->second.first;
  c.outcome = load_case_outcome(db, c.case_id, c.outcome_json,
                                pit != phases.end() ? std::optional<std::int64_t>(pit->second.first) : std::nullopt);
  if (c.lost()) return c;  // no trace: latency imputed once every completed case is known
  if (pit == phases.end() || !pit->second.second) {
    if (c.usable) exclude_case(c, warnings, "no pressure phase with start_ns and end_ns in table phases");
    return c;
  }
  c.pressure_end_ns = *pit->second.second;
  PhaseWindow w;
  w.start_ns = c.pressure_start_ns;
  w.end_ns = c.pressure_end_ns;
  w.period_ns = period_ns;
  if (auto r = phases.find("restoration"); r != phases.end()) {
    w.observation_end_ns = r->second.first;
  } else {
    no_restoration = true;
    w.observation_end_ns = c.pressure_end_ns;
    for (const auto& [name, se] : phases) w.observation_end_ns = std::max(w.observation_end_ns, se.second.value_or(se.first));
  }
  const auto wit = phases.find("warmup");
  summarize_canaries(db, c, reqs, w, wit != phases.end() ? wit->second.first : c.pressure_start_ns, warnings);
  c.mech = read_mechanism(db, c);
  return c;
}

}  // namespace

std::optional<CaseSummary> load_case(results::Db& db, const std::string& case_id, std::vector<std::string>& warnings) {
  results::Stmt cs(db, std::string(kCaseSelect) + " WHERE case_id = ?1");
  cs.bind(1, case_id);
  if (!cs.step()) return std::nullopt;
  if (cs.text(8) != "completed" && cs.text(8) != "lost") return std::nullopt;
  std::vector<RawRequest> reqs;
  bool no_restoration = false;
  auto c = summarize_row(db, cs, reqs, warnings, no_restoration);
  if (no_restoration)
    warnings.push_back(fmt::format("case {} has no restoration phase: censored requests use the latest phase end as "
                                   "observation end (assumption)", case_id));
  return c;
}

namespace {

/// One case summarised by a loading worker, kept apart until every case is done.
struct CaseSlot {
  std::optional<CaseSummary> c;
  std::vector<std::string> warnings;
  bool no_restoration = false;
};

/// Summarises the cases `ids` on `threads` connections (0: up to 4, one per core; at most one per
/// 8 cases): workers take the next index, each case into its own slot, so the result is the same
/// for any thread count. The first error of any worker is rethrown.
std::vector<CaseSlot> summarize_cases(results::Db& db, const std::string& db_path, const std::vector<std::string>& ids,
                                      unsigned threads) {
  std::vector<CaseSlot> slots(ids.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mu;
  auto work = [&](results::Db& conn) {
    try {
      results::Stmt cs(conn, std::string(kCaseSelect) + " WHERE case_id = ?1");
      std::vector<RawRequest> reqs;
      for (std::size_t i = next++; i < ids.size(); i = next++) {
        cs.reset();
        cs.bind(1, ids[i]);
        if (!cs.step()) throw results::DbError(db_path + ": case " + ids[i] + " vanished while it was read");
        slots[i].c = summarize_row(conn, cs, reqs, slots[i].warnings, slots[i].no_restoration);
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

/// The slots' cases and warnings in case_id order into `out`, and one warning for the cases
/// without a restoration phase.
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

/// The schedule in plan order, and the scheduled cases without a case record (`known`: the
/// recorded ones).
void read_schedule(results::Db& db, const std::set<std::string>& known, CampaignData& out) {
  if (!has_table(db, "schedule")) return;
  results::Stmt sc(db, "SELECT case_id, vm, regime, repeat, triplet_id, configuration, state FROM schedule ORDER BY ordinal");
  while (sc.step()) {
    ScheduledCase s{sc.text(0), sc.text(1), sc.text(2), sc.opt_text(4).value_or(""), sc.text(5), sc.text(6), sc.int64(3)};
    if (!known.count(s.case_id)) out.missing.push_back(s.case_id);
    out.schedule.push_back(std::move(s));
  }
}

/// The declared family of comparisons and the arms (analysis/arms.hpp).
void read_family_and_arms(results::Db& db, CampaignData& out) {
  const auto family = declared_comparisons(out.meta, out.warnings);
  out.comparisons = family.comparisons;
  out.comparisons_source = family.source;
  std::vector<std::string> configurations;
  {
    results::Stmt q(db, "SELECT DISTINCT configuration FROM cases");
    while (q.step()) configurations.push_back(q.text(0));
  }
  for (const auto& s : out.schedule) configurations.push_back(s.configuration);
  out.arms = load_arms(db, configurations, out.comparisons, out.arms_recorded);
}

}  // namespace

CampaignData load_campaign(const std::string& db_path, unsigned threads) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  CampaignData out;
  out.db_path = db_path;
  {
    results::Stmt st(db, "SELECT key, value FROM campaign_meta");
    while (st.step()) out.meta[st.text(0)] = st.text(1);
  }
  std::set<std::string> known;
  std::vector<std::string> ids;  // completed and lost cases, in case_id order
  {
    results::Stmt cs(db, "SELECT case_id, status FROM cases ORDER BY case_id");
    while (cs.step()) {
      known.insert(cs.text(0));
      if (cs.text(1) != "completed" && cs.text(1) != "lost")
        out.infra_failed.push_back(cs.text(0));
      else
        ids.push_back(cs.text(0));
    }
  }
  std::vector<CaseSlot> slots = summarize_cases(db, db_path, ids, threads);
  gather_cases(slots, out);
  impute_lost(out);
  read_schedule(db, known, out);
  out.attempts = load_attempts(db);
  read_family_and_arms(db, out);
  return out;
}

}  // namespace analysis
