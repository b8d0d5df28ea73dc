// What an arm buys and what it costs (see arm_effects.hpp).
#include "analysis/tables/arm_effects.hpp"

#include "analysis/stats/bootstrap.hpp"
#include "harness/text/join.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

namespace analysis {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::optional<double> dram_held(const CaseSummary& c) { return c.mech.dram_held_avg_mib; }
std::optional<double> bg_avg(const CaseSummary& c) { return c.mech.phase_memory[1].bg_current_avg_mib; }
std::optional<double> bg_min(const CaseSummary& c) { return c.mech.phase_memory[1].bg_current_min_mib; }
std::optional<double> swapfile(const CaseSummary& c) { return c.mech.phase_memory[1].swapfile_used_max_mib; }
std::optional<double> pgsteal(const CaseSummary& c) { return c.mech.bg_pgsteal_mib; }
std::optional<double> refaults(const CaseSummary& c) { return c.mech.refaults; }
std::optional<double> kswapd(const CaseSummary& c) { return c.mech.kswapd_cpu_ms; }
std::optional<double> bg_system(const CaseSummary& c) { return c.mech.bg_cpu_system_ms; }
std::optional<double> fg_psi(const CaseSummary& c) { return c.mech.fg_some_stall_s; }
std::optional<double> fg_cpu_psi(const CaseSummary& c) { return c.mech.fg_cpu_some_s; }

/// A case's value of an endpoint, when the case measured it (completed, no recording error).
double measured_value(const CaseSummary* c, const SecondaryEndpoint& e) {
  if (!c || c->lost() || !c->usable) return kNaN;
  const auto v = e.value(*c);
  return v && std::isfinite(*v) ? *v : kNaN;
}

/// Estimate and percentile interval at `level` of the stratified mean of `d` (NaN rows left out,
/// strata renumbered over the ones left), B and seed of `opt`; blocks = rows used.
EndpointInterval interval_of(const std::vector<double>& d, const std::vector<int>& strata, const BootstrapOptions& opt,
                             double level) {
  std::map<int, int> renumber;
  for (std::size_t i = 0; i < d.size(); ++i)
    if (std::isfinite(d[i])) renumber.emplace(strata[i], 0);
  int next = 0;
  for (auto& [from, to] : renumber) to = next++;
  std::vector<double> rows;
  std::vector<int> labels;
  for (std::size_t i = 0; i < d.size(); ++i)
    if (std::isfinite(d[i])) {
      rows.push_back(d[i]);
      labels.push_back(renumber[strata[i]]);
    }
  EndpointInterval e;
  e.blocks = static_cast<int>(rows.size());
  if (rows.empty()) return e;
  const Eigen::MatrixXd m = Eigen::Map<const Eigen::VectorXd>(rows.data(), static_cast<Eigen::Index>(rows.size()));
  const BootstrapResult b = stratified_bootstrap(m, labels, opt);
  const Interval p = percentile_interval(b.plain.col(0), level);
  e.estimate = b.point(0);
  e.lower = p.lower;
  e.upper = p.upper;
  return e;
}

/// The columns of arm_effects_cases and arm_effects after the identifying ones: header (unit),
/// decimals, and the per-case value.
struct CaseColumn {
  std::string header;
  int decimals;
  std::function<std::optional<double>(const CaseSummary&)> value;
};

const std::vector<CaseColumn>& case_columns_of_effects() {
  static const std::vector<CaseColumn> cols = [] {
    std::vector<CaseColumn> v;
    for (int p = 0; p < 3; ++p) {
      const std::string ph = kEffectPhases[p];
      v.push_back({"bg memory.current avg, " + ph + " (MiB)", 1,
                   [p](const CaseSummary& c) { return c.mech.phase_memory[p].bg_current_avg_mib; }});
      v.push_back({"bg memory.current min, " + ph + " (MiB)", 1,
                   [p](const CaseSummary& c) { return c.mech.phase_memory[p].bg_current_min_mib; }});
      v.push_back({"net DRAM freed, " + ph + " (MiB)", 1,
                   [p](const CaseSummary& c) { return c.mech.phase_memory[p].net_freed_mib; }});
    }
    v.push_back({"zram pool avg, pressure (MiB)", 1, [](const CaseSummary& c) { return c.mech.phase_memory[1].zram_pool_avg_mib; }});
    v.push_back({"DRAM held by bg avg, pressure (MiB)", 1, dram_held});
    v.push_back({"swapfile used max, pressure (MiB)", 1, swapfile});
    v.push_back({"bg pgsteal, pressure (MiB)", 1, pgsteal});
    v.push_back({"refaults, pressure", 0, refaults});
    v.push_back({"kswapd CPU, pressure (ms)", 0, kswapd});
    v.push_back({"bg system CPU, pressure (ms)", 0, bg_system});
    v.push_back({"memory.reclaim writes CPU, pressure (ms)", 0, writes_cpu_ms});
    v.push_back({"reclaim CPU, pressure (ms)", 0, reclaim_cpu_ms});
    for (Canary k : {Canary::Compute, Canary::Sqlite})
      v.push_back({std::string(canary_name(k)) + " p99 (ms)", 2, [k](const CaseSummary& c) -> std::optional<double> {
                     const auto& l = c.latency[static_cast<int>(k)];
                     return l ? std::optional<double>(l->p99_us / 1000.0) : std::nullopt;
                   }});
    v.push_back({"fg memory PSI some, pressure (s)", 3, fg_psi});
    v.push_back({"fg CPU PSI some, pressure (s)", 3, fg_cpu_psi});
    return v;
  }();
  return cols;
}

/// A number cell, or "not measured".
nlohmann::json cell(std::optional<double> v) {
  return v && std::isfinite(*v) ? num(*v) : nlohmann::json(kNotMeasured);
}

}  // namespace

const std::vector<SecondaryEndpoint>& secondary_endpoints() {
  static const std::vector<SecondaryEndpoint> e = {
      {"net DRAM freed (bg memory.current + zram pool, time average in pressure)", "MiB", true, dram_held},
      {"bg memory.current freed (time average in pressure)", "MiB", true, bg_avg},
      {"bg memory.current minimum lowered (pressure)", "MiB", true, bg_min},
      {"swapfile used, maximum in pressure", "MiB", false, swapfile},
      {"bg pgsteal in pressure", "MiB", false, pgsteal},
      {"refaults in pressure", "count", false, refaults},
      {"reclaim CPU in pressure (kswapd + bg system + memory.reclaim writes)", "ms", false, reclaim_cpu_ms},
      {"kswapd CPU in pressure", "ms", false, kswapd},
      {"bg system CPU in pressure (cpu.stat system_usec)", "ms", false, bg_system},
      {"memory.reclaim writes CPU in pressure", "ms", false, writes_cpu_ms},
      {"fg memory PSI some in pressure", "s", false, fg_psi},
      {"fg CPU PSI some in pressure", "s", false, fg_cpu_psi}};
  return e;
}

std::vector<PairEffects> secondary_intervals(const TripletSet& ts, const PrimaryResult& pr) {
  std::vector<PairEffects> out;
  for (const auto& c : ts.family()) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const PairEffects& p) { return p.treatment == c.treatment && p.comparator == c.comparator; });
    if (it == out.end()) it = out.insert(out.end(), PairEffects{c.treatment, c.comparator, {}, {}});
    it->comparisons.push_back(c.label);
  }
  const std::vector<int> strata = stratum_labels(ts);
  const BootstrapOptions opt{pr.replicates, pr.seed, 0};
  for (auto& p : out) {
    const int ti = ts.arm_index(p.treatment), ci = ts.arm_index(p.comparator);
    for (const auto& e : secondary_endpoints()) {
      std::vector<double> d;
      for (const auto& b : ts.triplets) {
        const double t = ti < 0 ? kNaN : measured_value(b.cases[static_cast<std::size_t>(ti)], e);
        const double k = ci < 0 ? kNaN : measured_value(b.cases[static_cast<std::size_t>(ci)], e);
        d.push_back(e.freed ? k - t : t - k);
      }
      EndpointInterval iv = interval_of(d, strata, opt, pr.level);
      iv.endpoint = e.name;
      iv.unit = e.unit;
      p.endpoints.push_back(std::move(iv));
    }
  }
  return out;
}

Table case_effects_table(const TripletSet& ts) {
  Table t{"arm_effects_cases",
          "What each case bought and cost (secondary): bg memory per phase, reclaim work and reclaim CPU",
          {{"case", 0}, {"arm", 0}, {ts.unit, 0, "triplet_id"}, {"status", 0}},
          {},
          {}};
  for (const auto& c : case_columns_of_effects()) t.columns.push_back({c.header, c.decimals});
  for (const auto& b : ts.triplets)
    for (const CaseSummary* c : b.cases) {
      std::vector<nlohmann::json> row{c->case_id, c->configuration, b.id, c->status};
      for (const auto& col : case_columns_of_effects())
        row.push_back(c->lost() || !c->usable ? nlohmann::json(kNotMeasured) : cell(col.value(*c)));
      t.add(std::move(row));
    }
  t.notes.push_back(
      "Every case of the complete blocks (Table 4's). MiB = 2^20 bytes. Per phase (1 Hz telemetry samples of that "
      "phase): bg memory.current time average (trapezoids over the sample times) and minimum; net DRAM freed = the "
      "fall of bg memory.current (first sample - last) less the growth of the zram pool (mm_stat mem_used_total, "
      "last - first): negative when bg ended the phase holding more. Pressure phase (first and last sample, as the "
      "mechanism table): zram pool and DRAM held by bg (memory.current + the pool) time averages; the swapfile's "
      "/proc/swaps Used maximum (disk, not DRAM); bg pgsteal x page size; refaults (bg+fg workingset_refault); CPU "
      "time reclaim took, where the kernel accounts it: kswapd = utime + stime of the kswapd threads "
      "(/proc/<pid>/stat), bg system = bg cpu.stat system_usec (direct reclaim, the compression into zram in it, "
      "page faults), writes = the memory.reclaim writers' thread CPU during write(2) (CLOCK_THREAD_CPUTIME_ID; "
      "0 when the case wrote nothing in pressure), reclaim CPU = their sum. fg p99 = Table 4's outcome; fg PSI = "
      "the mechanism's. A lost case has no telemetry (not measured).");
  return t;
}

Table arm_effects_table(const TripletSet& ts) {
  Table t{"arm_effects", "What each arm bought and cost (secondary): medians over its measured cases",
          {{"arm", 0}, {"cases", 0}, {"measured cases", 0}}, {}, {}};
  for (const auto& c : case_columns_of_effects()) t.columns.push_back({c.header + ", median", c.decimals});
  for (std::size_t a = 0; a < ts.arms.size(); ++a) {
    int n = 0, meas = 0;
    std::vector<std::vector<std::optional<double>>> v(case_columns_of_effects().size());
    for (const auto& b : ts.triplets) {
      const CaseSummary* c = b.cases[a];
      ++n;
      if (c->lost() || !c->usable) continue;
      ++meas;
      for (std::size_t j = 0; j < v.size(); ++j) v[j].push_back(case_columns_of_effects()[j].value(*c));
    }
    std::vector<nlohmann::json> row{ts.arms[a], n, meas};
    for (const auto& col : v) row.push_back(median_cell(col, kNotMeasured));
    t.add(std::move(row));
  }
  t.notes.push_back("Medians (type 7) over the arm's completed cases of Table 4's blocks of the columns of "
                    "arm_effects_cases (same units and definitions); descriptive and unpaired: the paired intervals "
                    "are in secondary_endpoints.");
  return t;
}

Table secondary_table(const std::vector<PairEffects>& pairs, const PrimaryResult& pr) {
  const std::string lv = fmt::format("{:.2f}%", pr.level * 100);
  Table t{"secondary_endpoints",
          "Secondary endpoints per declared comparison: what the treatment bought and cost against its comparator "
          "(paired, stratified bootstrap; never in the verdict)",
          {{"treatment", 0}, {"comparator", 0}, {"declared comparisons", 0, "comparisons"}, {"endpoint", 0},
           {"unit", 0}, {pr.unit + "s", 0, "blocks"}, {"estimate", 3}, {"lower (" + lv + ")", 3, "lower"},
           {"upper (" + lv + ")", 3, "upper"}, {"analysis", 0}},
          {},
          {}};
  for (const auto& p : pairs)
    for (const auto& e : p.endpoints)
      t.add({p.treatment, p.comparator, harness::text::join(p.comparisons, "; "), e.endpoint, e.unit, e.blocks,
             e.blocks ? num(e.estimate) : nlohmann::json(kNotMeasured),
             e.blocks ? num(e.lower) : nlohmann::json(kNotMeasured), e.blocks ? num(e.upper) : nlohmann::json(kNotMeasured),
             "secondary"});
  t.notes.push_back(fmt::format(
      "Per block the difference of the two cases' values (arm_effects_cases): comparator - treatment for the "
      "endpoints that say freed or lowered (positive = the treatment held less), treatment - comparator for the "
      "others (positive = the treatment used more). Estimate = mean over (vm, regime) strata of the stratum means; "
      "interval: the stratified percentile bootstrap of Table 4 (B = {}, seed {}, {} = 1 - {}/{} per endpoint, as "
      "Table 4's), over the blocks whose two cases measured the endpoint (all of them: the same resampling as Table "
      "4). Secondary: labelled so, never in the verdict, and not part of the declared family's alpha unless a "
      "campaign declares them.",
      pr.replicates, pr.seed, lv, pr.alpha, pr.m));
  return t;
}

nlohmann::json tradeoff_json(const std::vector<PairEffects>& pairs, const PrimaryResult& pr) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : pr.comparisons) {
    const auto p = std::find_if(pairs.begin(), pairs.end(), [&](const PairEffects& x) {
      return x.treatment == c.treatment && x.comparator == c.comparator;
    });
    if (p == pairs.end() || p->endpoints.empty()) continue;
    const EndpointInterval& f = p->endpoints.front();  // net DRAM freed
    nlohmann::json point = {{"label", c.label},       {"canary", canary_name(c.canary)}, {"treatment", c.treatment},
                            {"comparator", c.comparator}, {"ratio", c.estimate},      {"ratio_lower", c.lower},
                            {"ratio_upper", c.upper},     {"freed_blocks", f.blocks}};
    point["freed_mib"] = f.blocks ? nlohmann::json(f.estimate) : nlohmann::json(nullptr);
    point["freed_lower_mib"] = f.blocks ? nlohmann::json(f.lower) : nlohmann::json(nullptr);
    point["freed_upper_mib"] = f.blocks ? nlohmann::json(f.upper) : nlohmann::json(nullptr);
    out.push_back(std::move(point));
  }
  return out;
}

}  // namespace analysis
