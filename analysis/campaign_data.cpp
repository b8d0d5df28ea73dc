// Campaign DB loading (see campaign_data.hpp).
#include "analysis/campaign_data.hpp"

#include "results/db.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace analysis {
namespace {

std::vector<RawRequest> read_requests(results::Db& db, const std::string& case_id, Canary canary) {
  results::Stmt st(db,
                   "SELECT seq, scheduled_ns, wake_ns, completion_ns FROM canary_requests "
                   "WHERE case_id = ?1 AND canary = ?2 ORDER BY seq");
  st.bind(1, case_id).bind(2, canary_name(canary));
  std::vector<RawRequest> out;
  while (st.step()) out.push_back({st.int64(0), st.int64(1), st.opt_int64(2), st.opt_int64(3)});
  return out;
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
  results::Stmt st(db,
                   "SELECT bg_some_us, bg_full_us, fg_some_us, fg_full_us, "
                   "bg_workingset_refault_anon, bg_workingset_refault_file, "
                   "fg_workingset_refault_anon, fg_workingset_refault_file, pswpout, "
                   "zram_orig_data_bytes, zram_compr_data_bytes, zram_mem_used_bytes, "
                   "bg_oom_kill, fg_oom_kill FROM telemetry "
                   "WHERE case_id = ?1 AND t_ns >= ?2 AND t_ns <= ?3 ORDER BY t_ns");
  st.bind(1, c.case_id).bind(2, c.pressure_start_ns).bind(3, c.pressure_end_ns);
  Series bs, bf, fs, ff, refault, swp, zo, zc, zm, oom;
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
  m.refaults = delta(refault, 1.0);
  m.swapout_kib = delta(swp, static_cast<double>(c.page_size_bytes) / 1024.0);
  m.oom_kills = delta(oom, 1.0);
  constexpr double mib = 1.0 / (1024.0 * 1024.0);
  if (zo.peak) m.zram_orig_peak_mib = *zo.peak * mib;
  if (zc.peak) m.zram_compr_peak_mib = *zc.peak * mib;
  if (zm.peak) m.zram_mem_used_peak_mib = *zm.peak * mib;
  return m;
}

}  // namespace

std::vector<RawRequest> load_requests(const std::string& db_path, const std::string& case_id, Canary canary) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  return read_requests(db, case_id, canary);
}

CampaignData load_campaign(const std::string& db_path) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  CampaignData out;
  out.db_path = db_path;
  {
    results::Stmt st(db, "SELECT key, value FROM campaign_meta");
    while (st.step()) out.meta[st.text(0)] = st.text(1);
  }
  std::set<std::string> known;
  results::Stmt cs(db,
                   "SELECT case_id, campaign, vm, regime, repeat, triplet_id, configuration, dose_bytes, "
                   "status, accelerator, kernel_release, page_size_bytes, spec_json FROM cases ORDER BY case_id");
  while (cs.step()) {
    CaseSummary c;
    c.case_id = cs.text(0);
    known.insert(c.case_id);
    c.status = cs.text(8);
    if (c.status != "completed") {
      out.infra_failed.push_back(c.case_id);
      continue;
    }
    c.campaign = cs.text(1);
    c.vm = cs.text(2);
    c.regime = cs.text(3);
    c.repeat = cs.int64(4);
    c.triplet_id = cs.opt_text(5).value_or("");  // NULL: pilot case, not part of a triplet
    c.configuration = *parse_config(cs.text(6));  // CHECK constraint guarantees a known name
    c.dose_bytes = cs.opt_int64(7);
    c.accelerator = cs.opt_text(9).value_or("unknown");
    c.kernel_release = cs.opt_text(10).value_or("");
    c.page_size_bytes = cs.opt_int64(11).value_or(4096);
    auto mark = [&](std::string why) {
      c.usable = false;
      c.excluded_because = why;
      out.warnings.push_back(fmt::format("case {} excluded: {}", c.case_id, why));
    };
    try {
      c.spec = nlohmann::json::parse(cs.text(12));
    } catch (const std::exception& e) {
      mark(fmt::format("cases.spec_json is not valid JSON ({})", e.what()));
    }
    std::int64_t period_ns = 100'000'000;
    if (c.spec.is_object() && c.spec.contains("canaries") && c.spec["canaries"].contains("period_ms") &&
        c.spec["canaries"]["period_ms"].is_number())
      period_ns = static_cast<std::int64_t>(c.spec["canaries"]["period_ms"].get<double>() * 1e6);

    results::Stmt ph(db, "SELECT start_ns, end_ns FROM phases WHERE case_id = ?1 AND phase = 'pressure'");
    ph.bind(1, c.case_id);
    if (!ph.step() || ph.is_null(1)) {
      if (c.usable) mark("no pressure phase with start_ns and end_ns in table phases");
      out.cases.push_back(std::move(c));
      continue;
    }
    c.pressure_start_ns = ph.int64(0);
    c.pressure_end_ns = ph.int64(1);
    for (Canary k : {Canary::Compute, Canary::Sqlite}) {
      auto reqs = read_requests(db, c.case_id, k);
      if (reqs.empty()) continue;
      try {
        auto s = summarize_requests(reqs, c.pressure_start_ns, c.pressure_end_ns, period_ns);
        if (s.nonpositive > 0 && c.usable)
          mark(fmt::format("canary {}: {} request(s) with response <= 0 (first seq {}): completion_ns <= scheduled_ns",
                           canary_name(k), s.nonpositive, s.first_nonpositive_seq));
        if (s.incomplete > 0)
          out.warnings.push_back(fmt::format(
              "case {} canary {}: {} of {} pressure-phase request(s) never completed (completion_ns NULL): "
              "counted as deadline misses and as +inf response",
              c.case_id, canary_name(k), s.incomplete, s.requests));
        c.latency[static_cast<int>(k)] = s;
      } catch (const std::invalid_argument& e) {
        out.warnings.push_back(fmt::format("case {} canary {}: {}", c.case_id, canary_name(k), e.what()));
      }
    }
    c.mech = read_mechanism(db, c);
    out.cases.push_back(std::move(c));
  }
  results::Stmt sc(db, "SELECT case_id FROM schedule ORDER BY ordinal");
  while (sc.step()) {
    auto id = sc.text(0);
    if (!known.count(id)) out.missing.push_back(id);
  }
  return out;
}

}  // namespace analysis
