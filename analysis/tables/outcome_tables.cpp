// Outcome and protocol-quality tables (see outcome_tables.hpp).
#include "analysis/tables/outcome_tables.hpp"

#include "analysis/data/overrides.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "harness/kernel/errors.hpp"
#include "harness/text/join.hpp"

namespace analysis {
namespace {

using nlohmann::json;

// Sum of optional integers as a cell: "not measured" when no case has the value.
json sum_cell(const std::vector<std::optional<std::int64_t>>& v) {
  std::optional<std::int64_t> s;
  for (const auto& x : v)
    if (x) s = s.value_or(0) + *x;
  return s ? json(*s) : json(kNotMeasured);
}

// Table cell for a write errno: "0 (success)", "11 EAGAIN", or the bare number when the C
// library has no name for it (name from harness::kernel::errno_name, which says "errno <n>" then).
std::string errno_cell(int e) {
  if (e == 0) return "0 (success)";
  const std::string n = harness::kernel::errno_name(e);
  return n.starts_with("errno ") ? std::to_string(e) : fmt::format("{} {}", e, n);
}

// The campaign's arm names in report order (CampaignData::arms; by hand-built data: the default).
std::vector<std::string> arms_of(const CampaignData& data) {
  std::vector<std::string> v;
  for (const auto& a : data.arms) v.push_back(a.name);
  if (v.empty()) {
    std::vector<std::string> configurations;
    for (const auto& c : data.cases) configurations.push_back(c.configuration);
    for (const auto& s : data.schedule) configurations.push_back(s.configuration);
    v = default_arm_names(configurations, data.comparisons.empty() ? study_comparisons() : data.comparisons);
  }
  return v;
}

}  // namespace

Table outcome_counts_table(const CampaignData& data, const TripletSet& ts) {
  Table t{"outcome_counts", "Outcome counts per configuration (every case keeps its outcome)",
          {{"configuration", 0}, {"cases", 0}, {"censored requests, compute", 0}, {"censored requests, sqlite", 0},
           {"cases with truncated trace", 0}, {"cases with censored p99 (lower bound)", 0}, {"OOM kills bg", 0},
           {"OOM kills fg", 0}, {"lost cases", 0}, {"imputed p99 values", 0}, 
           // the CSV name stays the study's ("triplets") whatever the block word
           {"incomplete " + ts.unit + "s (member never ran)", 0, tidy_name("incomplete triplets (member never ran)")}},
          {}, {}};
  for (const std::string& cf : ts.arms) {
    int n = 0, truncated = 0, flagged = 0, lost = 0, imputed = 0;
    long long cens[2] = {0, 0};
    std::vector<std::optional<std::int64_t>> bg, fg;
    for (const auto& c : data.cases) {
      if (c.triplet_id.empty() || c.configuration != cf) continue;
      ++n;
      if (c.lost()) ++lost;
      bool trunc = false, fl = false;
      for (int k = 0; k < 2; ++k) {
        const auto& l = c.latency[k];
        if (!l) continue;
        cens[k] += static_cast<long long>(l->censored);
        trunc = trunc || l->truncated;
        fl = fl || l->censored > 0;
        if (l->imputed) ++imputed;
      }
      truncated += trunc;
      flagged += fl;
      bg.push_back(c.outcome.oom_kills_bg);
      fg.push_back(c.outcome.oom_kills_fg);
    }
    int incomplete = 0;
    for (const auto& inc : ts.incomplete)
      for (const auto& m : inc.never_run)
        if (m.rfind(cf + " (", 0) == 0) ++incomplete;
    t.add({cf, n, cens[0], cens[1], truncated, flagged, sum_cell(bg), sum_cell(fg), lost, imputed,
           incomplete});
  }
  t.notes.push_back(
      "Censored request: a pressure-phase request that never completed, or one the schedule implies but a truncated "
      "trace lacks; it enters the p99 as the lower bound (restoration start - scheduled start), so that case's p99 "
      "is a lower bound (docs/PROTOCOL.md). Lost case: no trace; its p99 per canary is the largest p99 of that canary "
      "among the campaign's completed cases (worst-observed imputation, PROTOCOL.md assumption): one imputed value "
      "per canary. OOM kills: outcome_json.oom_kills; \"not measured\" when no case records it.");
  if (!ts.incomplete.empty()) {
    std::string s = "Incomplete " + ts.unit + "s:";
    for (const auto& inc : ts.incomplete) {
      s += fmt::format(" {} [{}];", inc.id, harness::text::join(inc.never_run));
    }
    t.notes.push_back(s);
  }
  return t;
}

Table attempts_table(const CampaignData& data) {
  Table t{"attempts", "Attempts per configuration (audit trail, table attempts)",
          {{"configuration", 0}, {"attempts", 0}, {"infra failures", 0}, {"lost", 0}, {"reruns", 0},
           {"in flight", 0}, {"interrupted before the agent", 0, "interrupted"}, {"operator actions", 0}}, {}, {}};
  auto row = [&](const std::string& label, const AttemptCounts& n) {
    t.add({label, n.attempts, n.infra_failed, n.lost, n.reruns, n.in_flight, n.interrupted, n.operator_actions});
  };
  for (const auto& a : arms_of(data)) row(a, count_attempts(data.attempts, a));
  if (const auto unknown = count_attempts(data.attempts, "?");
      unknown.attempts + unknown.in_flight + unknown.interrupted + unknown.operator_actions > 0)
    row("unknown (no case or schedule row)", unknown);
  if (data.attempts.empty())
    t.notes.push_back("No attempts recorded (table attempts absent or empty: a bundle, or a DB before schema version 2).");
  t.notes.push_back("Attempts: finished runs of a case (attempts rows of kind run or adopted), counted the same way as "
                    "`harness status` does (analysis/data/attempts_audit.hpp). Reruns: attempts of a case after its first; "
                    "only infra failures before the pressure phase are rerun (study). Lost cases are never rerun "
                    "automatically (docs/PROTOCOL.md).");
  t.notes.push_back("Apart: rows in flight while the DB was read, runs interrupted before the case reached an agent "
                    "(the runner stopped; nothing ran), and operator actions (harness mark-infra, harness "
                    "reset-infra), which are listed in the next table.");
  return t;
}

Table reclassifications_table(const CampaignData& data) {
  Table t{"mark_infra", "Operator actions (harness mark-infra, harness reset-infra)",
          {{"case", 0}, {"attempt", 0}, {"configuration", 0}, {"action", 0}, {"reason", 0}, {"previous status", 0},
           {"original p99 (overridden outcome)", 0, "original_p99"}}, {}, {}};
  std::map<std::pair<std::string, std::int64_t>, std::string> original;  // (case, attempt) -> p99 text
  for (const auto& o : overridden_cases(data))
    original[{o.case_id, o.attempt}] = o.original_status == "lost" ? "lost (imputed)" : o.original_p99_text();
  for (const auto& a : data.attempts) {
    if (!is_operator_action(a)) continue;
    const auto& d = a.detail;
    const std::string prev = d.is_object() && d.contains("previous_status") && d["previous_status"].is_string()
                                 ? d["previous_status"].get<std::string>()
                                 : std::string("-");
    const auto it = original.find({a.case_id, a.attempt});
    t.add({a.case_id, a.attempt, a.configuration, a.kind, a.reason.empty() ? std::string("(no reason recorded)") : a.reason,
           prev, it == original.end() ? std::string("-") : it->second});
  }
  if (t.rows.empty()) t.notes.push_back("None.");
  else
    t.notes.push_back("A completed or lost case reclassified with --override-outcome is an overridden outcome: the "
                      "warnings name it with its original p99s and Table 4 shows the original outcomes reinstated.");
  return t;
}

namespace {

/// What one arm's cases record of the trigger and the memory.reclaim writes.
struct ReclaimTally {
  int n = 0, triggered = 0, writes = 0;
  std::int64_t irregular = 0;
  bool irregular_known = false;
  int cf_recorded = 0, cf_earlier = 0, cf_only = 0;  // the window rule's counterfactual
  std::vector<std::optional<double>> delay, dur, req, ach, conc, cons, ratio, earlier_by;
  std::map<int, int> errnos;
};

ReclaimTally tally_reclaim(const std::vector<const CaseSummary*>& cases, const std::string& cf) {
  ReclaimTally x;
  for (const auto* c : cases) {
    if (c->configuration != cf) continue;
    ++x.n;
    if (c->outcome.trigger_delay_s) {
      ++x.triggered;
      x.delay.push_back(c->outcome.trigger_delay_s);
    }
    if (c->outcome.irregular_windows) x.irregular += *c->outcome.irregular_windows, x.irregular_known = true;
    if (c->outcome.length_rule_counterfactual_recorded) {
      ++x.cf_recorded;
      if (const auto& w = c->outcome.without_length_rule_delay_s) {
        ++x.cf_earlier;
        if (c->outcome.trigger_delay_s) x.earlier_by.push_back(*c->outcome.trigger_delay_s - *w);
        else ++x.cf_only;
      }
    }
    for (const auto& r : c->outcome.reclaim) {
      ++x.writes;
      ++x.errnos[r.write_errno];
      x.dur.push_back(r.duration_ns / 1e6);
      x.req.push_back(r.requested_bytes / kMiB);
      if (r.achieved_bytes) {
        x.ach.push_back(*r.achieved_bytes / kMiB);
        if (r.requested_bytes > 0) x.ratio.push_back(static_cast<double>(*r.achieved_bytes) / r.requested_bytes);
      }
      if (r.concurrent_estimate_bytes) x.conc.push_back(*r.concurrent_estimate_bytes / kMiB);
      if (r.achieved_conservative_bytes) x.cons.push_back(*r.achieved_conservative_bytes / kMiB);
    }
  }
  return x;
}

/// The largest (`largest`) or smallest measured value as a cell, `absent` when none is.
json extreme_cell(const std::vector<std::optional<double>>& v, const json& absent, bool largest) {
  std::optional<double> m;
  for (const auto& x : v)
    if (x) m = largest ? std::max(m.value_or(*x), *x) : std::min(m.value_or(*x), *x);
  return m ? num(*m) : absent;
}

/// The reclaim_execution row of arm `cf`.
std::vector<json> reclaim_execution_row(const std::vector<const CaseSummary*>& cases, const std::string& cf) {
  const ReclaimTally x = tally_reclaim(cases, cf);
  auto max_cell = [](const std::vector<std::optional<double>>& v, const json& absent) { return extreme_cell(v, absent, true); };
  auto min_cell = [](const std::vector<std::optional<double>>& v, const json& absent) { return extreme_cell(v, absent, false); };
  const json none = x.writes ? json(kNotMeasured) : json("no write");
  std::string err;
  for (const auto& [e, k] : x.errnos) err += fmt::format("{}{}: {}", err.empty() ? "" : "; ", errno_cell(e), k);
  const json no_cf = x.cf_recorded ? json("none") : json(kNotMeasured);
  return {cf, x.n, x.triggered, median_cell(x.delay, kNotMeasured), max_cell(x.delay, kNotMeasured), x.writes,
          median_cell(x.dur, none), max_cell(x.dur, none), err.empty() ? std::string("no write") : err,
          median_cell(x.req, none), median_cell(x.ach, none), median_cell(x.conc, none), median_cell(x.cons, none),
          median_cell(x.ratio, none), min_cell(x.ratio, none), max_cell(x.ratio, none),
          x.irregular_known ? json(x.irregular) : json(kNotMeasured), x.cf_recorded,
          x.cf_recorded ? json(x.cf_earlier) : json(kNotMeasured), x.cf_recorded ? json(x.cf_only) : json(kNotMeasured),
          median_cell(x.earlier_by, no_cf), max_cell(x.earlier_by, no_cf)};
}

}  // namespace

Table reclaim_execution_table(const std::vector<const CaseSummary*>& cases, const std::vector<std::string>& arms) {
  Table t{"reclaim_execution", "Reclaim execution (secondary): trigger and memory.reclaim write per configuration",
          {{"configuration", 0}, {"cases", 0}, {"triggered", 0}, {"trigger delay median (s)", 1},
           {"trigger delay max (s)", 1}, {"writes", 0}, {"write duration median (ms)", 1}, {"write duration max (ms)", 1},
           {"errno counts", 0}, {"requested median (MiB)", 1}, {"achieved across write median (MiB)", 1},
           {"concurrent estimate median (MiB)", 1}, {"conservative achieved median (MiB)", 1},
           {"achieved/requested median", 3}, {"achieved/requested min", 3}, {"achieved/requested max", 3},
           {"irregular windows", 0}, {"cases with the window rule's counterfactual", 0},
           {"cases firing earlier without the window rule", 0},
           {"of which never fired with the rule", 0},
           {"earlier by median (s)", 1}, {"earlier by max (s)", 1}},
          {}, {}};
  for (const std::string& cf : arms) t.add(reclaim_execution_row(cases, cf));
  t.notes.push_back(
      "Trigger delay: trigger (static-zram: would_trigger) time since the pressure-phase start (outcome_json.trigger, "
      "else controller_events). Achieved across the write = (counter after - before) x page size (pgsteal_proactive "
      "where the kernel has it, else bg pgsteal, which also counts limit reclaim beside the write); concurrent "
      "estimate = bg pgsteal rate before the trigger x write duration; conservative = max(0, achieved - estimate) "
      "(docs/PROTOCOL.md). achieved/requested is shown as measured, never clipped: above 1 = over-reclaim.");
  t.notes.push_back(
      "Window rule (ours, campaigns/README.md Table 1): a window whose real length is outside [0.9, 1.1] x the "
      "window never counts and resets the run of three. Irregular windows: pressure-phase windows flagged irregular "
      "(controller_events). Counterfactual: the time the trigger would have fired had irregular windows been judged "
      "on their PSI growth like any other (outcome_json.trigger.earlier_without_length_rule_t_ns); 'earlier by' = "
      "real firing minus that time, over the cases that fired both ways; 'never fired with the rule' = fired only "
      "without it.");
  return t;
}

Table measurement_quality_table(const std::vector<const CaseSummary*>& cases, const std::vector<std::string>& arms) {
  Table t{"measurement_quality", "Load and measurement quality per configuration",
          {{"configuration", 0}, {"cases", 0}, {"nominal rate median (MiB/s)", 1}, {"achieved rate median (MiB/s)", 1},
           {"cases > 10% below nominal", 0}, {"pressure-episode fraction median", 3}, {"irregular windows", 0},
           {"judged windows", 0}, {"cases with steal > 1%", 0}, {"steal median (ms)", 1},
           {"harness self cpu median (s)", 2}, {"harness self peak RSS median (KiB)", 0}},
          {}, {}};
  for (const std::string& cf : arms) {
    int n = 0, slow = 0, stolen = 0;
    bool rate_known = false, steal_known = false;
    std::vector<std::optional<double>> nominal, achieved, episode, steal, cpu, rss;
    std::vector<std::optional<std::int64_t>> irregular, windows;
    for (const auto* c : cases) {
      if (c->configuration != cf) continue;
      ++n;
      const auto& o = c->outcome;
      nominal.push_back(o.nominal_rate_mib_s);
      achieved.push_back(o.achieved_rate_mib_s);
      episode.push_back(o.episode_fraction);
      irregular.push_back(o.irregular_windows);
      windows.push_back(o.windows);
      if (o.steal_total_us) steal.push_back(*o.steal_total_us / 1000.0);
      cpu.push_back(o.harness_cpu_s);
      rss.push_back(o.harness_peak_rss_kib);
      if (o.achieved_rate_mib_s && o.nominal_rate_mib_s && *o.nominal_rate_mib_s > 0) {
        rate_known = true;
        if (*o.achieved_rate_mib_s < (1.0 - kRateShortfallFlag) * *o.nominal_rate_mib_s) ++slow;
      }
      if (o.steal_total_us && o.case_span_s) {
        steal_known = true;
        if (*o.steal_total_us > kStealFlagFraction * *o.case_span_s * 1e6) ++stolen;
      }
    }
    t.add({cf, n, median_cell(nominal, kNotMeasured), median_cell(achieved, kNotMeasured),
           rate_known ? json(slow) : json(kNotMeasured), median_cell(episode, kNotMeasured), sum_cell(irregular),
           sum_cell(windows), steal_known ? json(stolen) : json(kNotMeasured), median_cell(steal, kNotMeasured),
           median_cell(cpu, kNotMeasured), median_cell(rss, kNotMeasured)});
  }
  t.notes.push_back(fmt::format(
      "Rates: outcome_json.load (achieved = allocated bytes / time to allocate them); a case more than {:.0f}% below "
      "nominal is named in the warnings. Episode fraction: first to last pressure-phase window with bg PSI some growth "
      ">= the trigger threshold, over the pressure phase. Irregular window: real length outside [0.9, 1.1] x the "
      "window (not judged; resets the run). Steal: outcome_json.steal.total_us over warmup..recovery; a case is "
      "flagged when steal exceeds {:.0f}% of that time (PROTOCOL.md assumption). Harness self: the executor's (and "
      "agent's) cpu time and peak RSS over the case.",
      kRateShortfallFlag * 100, kStealFlagFraction * 100));
  return t;
}

std::vector<std::string> measurement_warnings(const std::vector<const CaseSummary*>& cases) {
  std::vector<std::string> w;
  std::string slow, stolen;
  int nslow = 0, nstolen = 0;
  for (const auto* c : cases) {
    const auto& o = c->outcome;
    if (o.achieved_rate_mib_s && o.nominal_rate_mib_s && *o.nominal_rate_mib_s > 0 &&
        *o.achieved_rate_mib_s < (1.0 - kRateShortfallFlag) * *o.nominal_rate_mib_s) {
      ++nslow;
      slow += fmt::format(" {} ({:.1f} of {:.1f} MiB/s);", c->case_id, *o.achieved_rate_mib_s, *o.nominal_rate_mib_s);
    }
    if (o.steal_total_us && o.case_span_s && *o.steal_total_us > kStealFlagFraction * *o.case_span_s * 1e6) {
      ++nstolen;
      stolen += fmt::format(" {} ({:.2f}% of {:.0f} s);", c->case_id, *o.steal_total_us / (*o.case_span_s * 1e4),
                            *o.case_span_s);
    }
  }
  if (nslow)
    w.push_back(fmt::format("{} case(s) allocated more than {:.0f}% below the nominal rate (the regime was not "
                            "delivered as specified):{}",
                            nslow, kRateShortfallFlag * 100, slow));
  if (nstolen)
    w.push_back(fmt::format("{} case(s) had cpu steal above {:.0f}% of the case time (host contention):{}", nstolen,
                            kStealFlagFraction * 100, stolen));
  return w;
}

}  // namespace analysis
