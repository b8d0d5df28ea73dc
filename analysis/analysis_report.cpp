// Confirmatory report (see analysis_report.hpp).
#include "analysis/analysis_report.hpp"

#include "analysis/study_medians.hpp"

#include "analysis/arms.hpp"

#include "analysis/campaign_settings.hpp"
#include "analysis/coverage.hpp"
#include "analysis/coverage_report.hpp"
#include "analysis/overrides.hpp"
#include "analysis/environment_table.hpp"
#include "analysis/outcome_tables.hpp"
#include "analysis/quantile.hpp"
#include "harness/text/join.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

namespace analysis {
namespace {

using nlohmann::json;

json med(const std::vector<std::optional<double>>& v) { return median_cell(v); }

// The mechanism table's study columns for an arm that does not carry a study arm's name.
constexpr const char* kNotInStudy = "not a study arm";

// Spec fields as (dotted key, text); sizes in bytes are shown in MiB ("cgroups.bg_memory_max (MiB)").
void flatten(const json& j, const std::string& prefix, std::map<std::string, std::string>& out) {
  static const std::string kBytes = "_bytes";
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else if ((j.is_number() || j.is_null()) && prefix.size() > kBytes.size() &&
             prefix.compare(prefix.size() - kBytes.size(), kBytes.size(), kBytes) == 0) {
    out[prefix.substr(0, prefix.size() - kBytes.size()) + " (MiB)"] =
        j.is_null() ? std::string("none (no limit)") : fmt::format("{:g}", j.get<double>() / kMiB);
  } else if (j.is_null()) {
    out[prefix] = "none";
  } else {
    out[prefix] = j.is_string() ? j.get<std::string>() : j.dump();
  }
}

// Median latency in ms (tables and figures share the unit) of values in us.
json med_ms(const std::vector<std::optional<double>>& us) {
  std::vector<std::optional<double>> v;
  for (const auto& x : us) v.push_back(x ? std::optional<double>(*x / 1000.0) : std::nullopt);
  return median_cell(v);
}

std::vector<const CaseSummary*> triplet_cases(const TripletSet& ts) {
  std::vector<const CaseSummary*> v;
  for (const auto& t : ts.triplets)
    for (const auto* c : t.cases) v.push_back(c);
  return v;
}

// Every completed and lost case of the campaign (a triplet_id: not a pilot case), complete
// triplet or not: the population of the secondary tables (study: "the 60 cases in each
// configuration").
std::vector<const CaseSummary*> campaign_cases(const CampaignData& data) {
  std::vector<const CaseSummary*> v;
  for (const auto& c : data.cases)
    if (!c.triplet_id.empty()) v.push_back(&c);
  return v;
}

// "four" for the study's m, else the number.
std::string count_words(int m) { return m == 4 ? std::string("four") : std::to_string(m); }

// The arms that write memory.reclaim in the sense of the report's dose and write-CPU columns: the
// treatments of the family, and every arm with a dose or a recorded write.
bool is_treatment(const TripletSet& ts, const std::string& arm) {
  for (const auto& c : ts.family())
    if (c.treatment == arm) return true;
  return false;
}

/// Table 1's rows of the spec fields every analysed case has with one value; returns the fields
/// that vary (per-case fields, as case_id or regime, are neither).
std::vector<std::string> constant_spec_rows(const std::vector<const CaseSummary*>& cases, Table& t) {
  static const std::set<std::string> per_case{"case_id", "vm", "regime", "repeat", "triplet_id", "configuration",
                                              "dose (MiB)", "pressure.rate_mib_s", "pressure.contents"};
  std::map<std::string, std::set<std::string>> values;
  std::map<std::string, std::size_t> present;
  for (const auto* c : cases) {
    std::map<std::string, std::string> f;
    flatten(c->spec, "", f);
    for (auto& [k, v] : f) {
      values[k].insert(v);
      ++present[k];
    }
  }
  std::vector<std::string> varying;
  for (auto& [k, vs] : values) {
    if (per_case.count(k)) continue;
    if (vs.size() == 1 && present[k] == cases.size()) t.add({k, *vs.begin()});
    else varying.push_back(k);
  }
  return varying;
}

/// Table 1's rows of what ran: each treatment's dose, accelerators, kernels, the campaign's
/// seed and plan hash, the arms and the family when not the study's.
void run_rows(const CampaignData& data, const std::vector<const CaseSummary*>& cases, const TripletSet& ts, Table& t) {
  std::set<std::string> accel, kernels;
  std::map<std::string, std::set<std::string>> doses;  // arm -> its doses (cases.dose_bytes)
  for (const auto* c : cases) {
    if (c->dose_bytes) doses[c->configuration].insert(fmt::format("{:g}", *c->dose_bytes / kMiB));
    accel.insert(c->accelerator);
    kernels.insert(c->kernel_release);
  }
  using harness::text::join;
  for (const auto& arm : ts.arms)
    if (doses.count(arm) || is_treatment(ts, arm))
      t.add({arm + " dose, memory.reclaim write (MiB)",
             doses.count(arm) ? join(doses[arm]) : std::string("no single dose: its policy's parameters (row arm " + arm + ")")});
  t.add({"accelerator", join(accel)});
  t.add({"guest kernel", join(kernels)});
  for (const char* k : {"seed", "schedule_sha256"})
    if (data.meta.count(k)) t.add({std::string("campaign ") + k, data.meta.at(k)});
  // Every arm's policy, parameters and hash (the DB's `arms` table, schema version 6).
  if (data.arms_recorded) {
    for (const auto& a : data.arms)
      t.add({"arm " + a.name, arm_record_text(a)});
  } else if (!is_study_family(ts.family()) ||
             std::any_of(ts.arms.begin(), ts.arms.end(), [](const std::string& a) { return study_arm_position(a) < 0; })) {
    const std::string names = harness::text::join(ts.arms);
    t.add({"arms", names + " (policy, params and sha256 not recorded: the DB has no arms table, e.g. a version-5 "
                           "file read read-only)"});
  }
  if (!is_study_family(ts.family()))
    t.add({"comparisons (" + data.comparisons_source + ")", family_text(ts.family())});
}

/// Table 1's rows of the analysis' own choices where the study is silent (campaigns/README.md
/// "Assumptions"); `m`: the family's size.
void analysis_rule_rows(const CampaignData& data, const TripletSet& ts, int m, Table& t) {
  PilotReading reading;  // the campaign's `eligibility` reading of the pilot rule (pilot_reading.hpp)
  {
    const auto s = read_campaign_settings(data.meta);
    reading.restoration = s.restoration.value_or(reading.restoration);
    reading.eagain = s.eagain.value_or(reading.eagain);
  }
  for (const auto& [k, v] : std::vector<std::pair<const char*, std::string>>{
           {"pilot rule reading", reading.text() + " (campaign YAML eligibility.restoration, eligibility.eagain; "
                                  "it chose the dose when design.dose_mib is from_pilot)"},
           {"lost case in Table 4", "p99 imputed as the worst observed of its canary (docs/PROTOCOL.md)"},
           {"Table 4 sensitivity rows", "complete cases (" + ts.unit + "s with a lost member left out); original "
                                        "outcomes of overridden cases reinstated (p99s only)"},
           {"lost case in Tables 5, 5b, 6, mechanism", "in the p99 medians with its imputed p99, in no other column"},
           {"attempts", "finished runs (kind run or adopted), as harness status counts them"},
           {"expected coverage", "analytic: equal within-stratum variances, normal errors, t df and kurtosis terms; "
                                 "joint = product of the " + count_words(m)}})
    t.add({std::string("analysis rule (ours): ") + k, v});
}

Table table1(const CampaignData& data, const std::vector<const CaseSummary*>& cases, const TripletSet& ts, int m) {
  Table t{"table1_constants", "Table 1. Settings and environment held constant across the analysed cases",
          {{"setting", 0}, {"value", 0}}, {}, {}};
  const std::vector<std::string> varying = constant_spec_rows(cases, t);
  run_rows(data, cases, ts, t);
  // What qualification and the executor recorded on the VMs (cases.environment_json, ...).
  std::vector<std::string> ids;
  for (const auto* c : cases) ids.push_back(c->case_id);
  try {
    for (auto& [k, v] : environment_rows(data.db_path, ids)) t.add({"environment: " + k, v});
  } catch (const std::exception& e) {
    t.notes.push_back(std::string("Environment rows not available: ") + e.what());
  }
  analysis_rule_rows(data, ts, m, t);
  if (!varying.empty()) {
    std::string s = "Settings that vary between cases (not constant, so not listed): ";
    s += harness::text::join(varying);
    t.notes.push_back(s + ".");
  }
  t.notes.push_back("Per-case fields (vm, regime, repeat, configuration, dose, rate, contents) are in Table 2 and the case records. "
                    "Sizes are in MiB (2^20 bytes) unless a row names another unit. Environment rows: "
                    "cases.environment_json and cases.qualification_json (recorded at case start) and the SQLite "
                    "canary's report (artifact canary-sqlite.json); \"not recorded\" = no analysed case has the field.");
  return t;
}

Table table2(const TripletSet& ts) {
  const int k_arms = static_cast<int>(ts.arms.size());
  Table t{"table2_regimes", "Table 2. Pressure regimes",
          {{"regime", 0}, {"allocation rate, nominal (MiB/s)", 0}, {"allocation rate, achieved median (MiB/s)", 1},
           {"pressure-episode fraction median", 3}, {"contents", 0}, {"VMs", 0}, {ts.unit + "s", 0, "triplets"}, {"cases", 0}}, {}, {}};
  std::map<std::string, std::vector<const Triplet*>> by;
  for (const auto& tr : ts.triplets) by[tr.regime].push_back(&tr);
  for (auto& [regime, list] : by) {
    std::set<std::string> vms;
    std::vector<std::optional<double>> achieved, episode;
    for (auto* tr : list) {
      vms.insert(tr->vm);
      for (const auto* c : tr->cases) {
        achieved.push_back(c->outcome.achieved_rate_mib_s);
        episode.push_back(c->outcome.episode_fraction);
      }
    }
    const auto& spec = list.front()->cases[0]->spec;
    json rate = nullptr, contents = nullptr;
    if (spec.contains("pressure")) {
      if (spec["pressure"].contains("rate_mib_s")) rate = spec["pressure"]["rate_mib_s"];
      if (spec["pressure"].contains("contents")) contents = spec["pressure"]["contents"];
    }
    t.add({regime, rate, median_cell(achieved, kNotMeasured), median_cell(episode, kNotMeasured), contents,
           static_cast<int>(vms.size()), static_cast<int>(list.size()), static_cast<int>(k_arms * list.size())});
  }
  t.notes.push_back("Achieved rate: outcome_json.load.achieved_rate_mib_s (allocated bytes / time to allocate them), "
                    "median over the regime's cases; episode fraction: outcome_json.load.episode.fraction_of_pressure. "
                    "Cases more than 10% below nominal are named in the warnings.");
  return t;
}

// A sensitivity analysis of Table 4: the same estimator and bootstrap on other data.
struct Sensitivity {
  std::string name;                 ///< the "analysis" column
  std::optional<PrimaryResult> pr;  ///< nullopt: nothing left to analyse (why_none)
  std::string why_none;
  std::string note;
};

Table table4(const PrimaryResult& pr, const std::vector<Sensitivity>& sens) {
  const std::string lv = fmt::format("{:.2f}%", pr.level * 100);
  Table t{"table4_primary",
          pr.study_family
              ? "Table 4. Primary comparisons: pressure-phase p99 response-time ratio, bounded reclaim / comparator"
              : "Table 4. Primary comparisons (the declared family of " + std::to_string(pr.m) +
                    "): pressure-phase p99 response-time ratio, treatment / comparator",
          {{"comparison", 0}, {pr.unit + "s", 0, "triplets"}, {"ratio", 3, "ratio"}, {"lower (" + lv + ")", 3, "ratio_lower"},
           {"upper (" + lv + ")", 3, "ratio_upper"}, {"change (%)", 1, "change_pct"}, {"harm", 0},
           {"corrected lower (secondary)", 3, "corrected_lower"}, {"corrected upper (secondary)", 3, "corrected_upper"},
           {"analysis", 0}},
          {}, {}};
  auto rows = [&](const PrimaryResult& p, const std::string& analysis) {
    for (const auto& c : p.comparisons)
      t.add({c.label, c.triplets, num(c.estimate), num(c.lower), num(c.upper), num(c.percent_change),
             !p.verdict.assessable ? "not assessable" : c.lower > 1 ? "HARM" : "no", num(c.corrected_lower),
             num(c.corrected_upper), analysis});
  };
  rows(pr, "primary");
  for (const auto& s : sens) {
    if (s.pr) rows(*s.pr, s.name);
    else t.notes.push_back(fmt::format("Sensitivity \"{}\": not computed: {}.", s.name, s.why_none));
    if (!s.note.empty()) t.notes.push_back(s.note);
  }
  if (!pr.study_family) t.notes.push_back("Comparisons: " + family_text(pr.family) + ".");
  t.notes.push_back(fmt::format(
      fmt::runtime(pr.study_family ? "Ratio = exp(mean over (vm, regime) strata of the stratum mean of ln(p99_reclaim / p99_comparator)); "
      "values below 1 favour bounded reclaim. Interval: stratified percentile bootstrap, B = {}, seed = {}, "
      "simultaneous level 1 - {}/{} = {} per comparison (the study's prespecified interval: the primary result). "
      "CSV: ratio_lower / ratio_upper are this interval."
      : "Ratio = exp(mean over (vm, regime) strata of the stratum mean of ln(p99_treatment / p99_comparator)); "
      "values below 1 favour the treatment. Interval: stratified percentile bootstrap, B = {}, seed = {}, "
      "simultaneous level 1 - {}/{} = {} per comparison (the study's prespecified interval: the primary result). "
      "CSV: ratio_lower / ratio_upper are this interval."),
      pr.replicates, pr.seed, pr.alpha, pr.m, lv));
  t.notes.push_back(
      "Corrected interval (secondary, labelled): each resampled stratum mean rescaled about the stratum mean by "
      "sqrt(n/(n-1)) (analysis/README.md); it does not enter the verdict.");
  t.notes.push_back(fmt::format(
      "Column analysis: \"primary\" rows decide the verdict. Sensitivity rows (same estimator, B and seed; never in "
      "the verdict): \"complete cases\" leaves out every {0} with a lost member instead of imputing its p99 "
      "(strata left without a {0} drop out); \"original outcomes reinstated\" puts back the outcome of every case "
      "an operator overrode with harness mark-infra --override-outcome (docs/PROTOCOL.md).",
      pr.unit));
  return t;
}

Table design_table(const PrimaryResult& pr, const TripletSet& ts) {
  Table t{"design_coverage", "Design and expected coverage of the intervals",
          {{"quantity", 0}, {"value", 4}}, {}, {}};
  std::vector<int> n = pr.stratum_sizes;
  std::sort(n.begin(), n.end());
  const auto& d = pr.coverage;
  t.add({"strata (vm, regime)", static_cast<int>(n.size())});
  const std::string& u = ts.unit;
  t.add({u + "s", static_cast<int>(ts.triplets.size())});
  t.add({"design", design_text(n)});
  t.add({u + "s per stratum (min / median / max)", fmt::format("{} / {} / {}", n.front(), n[n.size() / 2], n.back())});
  t.add({"strata with one " + u, static_cast<int>(std::count(n.begin(), n.end(), 1))});
  t.add({"nominal level per comparison", num(pr.level)});
  t.add({"bootstrap variance factor f / degrees of freedom, prespecified", fmt::format("{:.4f} / {:.1f}", d.variance_factor, d.df)});
  t.add({"expected coverage per comparison, prespecified interval (analytic)", num(d.per_comparison)});
  t.add({"expected coverage per comparison, corrected interval (analytic)", num(d.corrected_per_comparison)});
  t.add({fmt::format("joint coverage of all {}, lower bound (analytic), prespecified", pr.m), num(d.joint)});
  t.add({fmt::format("joint coverage of all {}, lower bound (analytic), corrected", pr.m), num(d.corrected_joint)});
  if (const auto* m = simulated_coverage_for(pr.stratum_sizes, pr.level)) {
    t.add({"measured coverage per comparison, prespecified (simulation)", num(m->plain_pooled)});
    t.add({"measured coverage per comparison, corrected (simulation)", num(m->corrected_pooled)});
    t.add({"measured joint coverage, prespecified (simulation; triplet-correlated errors)",
           fmt::format("{:.4f} ({:.4f})", m->plain_joint, m->plain_joint_triplet)});
    t.add({"measured joint coverage, corrected (simulation; triplet-correlated errors)",
           fmt::format("{:.4f} ({:.4f})", m->corrected_joint, m->corrected_joint_triplet)});
    t.notes.push_back(fmt::format(
        "Measured coverage: this design ({}) is simulated by tests/statistics/analysis ({}): {} synthetic datasets with "
        "known truth x B = {}, seed {}, through the same estimator and percentile interval (analysis/coverage_sim.hpp).",
        design_text(n), m->campaigns, m->datasets, m->replicates, m->seed));
  } else {
    t.add({"measured coverage (simulation)", "not simulated for this design: harness plan FILE --simulate-coverage"});
  }
  t.notes.push_back(
      "Expected coverage is ANALYTIC (analysis/coverage.hpp): a resampled mean of n units has variance (n-1)/n of the "
      "true one; with equal within-stratum variances the bootstrap variance factor is f = sum (n_s-1)/n_s^2 / sum "
      "1/n_s, estimated on Satterthwaite's degrees of freedom df; the percentile reaches z' = z + g/24 (z^3 - 3z) for the bootstrap distribution's excess kurtosis g (light tails of small strata), and coverage = 2 F_t(z' sqrt(f); df) - 1. The joint "
      "bound is the product of the per-comparison figures (Sidak; equal to it for independent comparisons).");
  return t;
}

// A value enters a descriptive median only from a case that measured it: a completed case
// without a recording error. A lost case has no trace and no telemetry (docs/PROTOCOL.md); it
// enters the p99 medians with its imputed value (as in Table 4) and nothing else.
bool measured(const CaseSummary& c) { return !c.lost() && c.usable; }
bool imputed_p99(const CaseSummary& c) { return c.lost() && c.usable; }

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
  bool wrote = is_treatment(ts, cf);
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

Table mechanism(const std::vector<const CaseSummary*>& cases, const TripletSet& ts) {
  Table t = mechanism_frame();
  for (const std::string& cf : ts.arms) t.add(mechanism_row(cases, ts, cf));
  mechanism_notes(t);
  return t;
}

Table absdiff(const PrimaryResult& pr) {
  const std::string lv = fmt::format("{:.2f}%", pr.level * 100);
  Table t{"absolute_differences",
          pr.study_family ? "Absolute p95 and p99 differences (bounded reclaim minus comparator)"
                          : "Absolute p95 and p99 differences (treatment minus comparator)",
          // Microseconds, the study's unit for absolute differences ("the latency in one
          // configuration minus the latency in the other, in microseconds").
          {{"comparison", 0}, {"quantile", 0}, {"difference (us)", 1, "difference_us"},
           {"lower (us, " + lv + ")", 1, "difference_lower_us"}, {"upper (us, " + lv + ")", 1, "difference_upper_us"}},
          {}, {}};
  for (const auto& a : pr.abs_diffs) t.add({a.label, a.quantile, num(a.estimate_us), num(a.lower_us), num(a.upper_us)});
  t.notes.push_back(pr.study_family
                        ? "Mean over strata of stratum-mean paired differences in microseconds (the study's unit); "
                          "same bootstrap replicates (same resampling indices) as Table 4. Negative = reclaim faster."
                        : "Mean over strata of stratum-mean paired differences in microseconds (the study's unit); "
                          "same bootstrap replicates (same resampling indices) as Table 4. Negative = the treatment "
                          "faster.");
  return t;
}

}  // namespace

std::string pipeline_test_dose_warning(const std::map<std::string, std::string>& meta) {
  const auto it = meta.find("schedule_json");
  if (it == meta.end()) return "";
  const json plan = json::parse(it->second, nullptr, false);
  if (!plan.is_object() || !plan.contains("dose_from_pilot")) return "";
  const json& p = plan["dose_from_pilot"];
  if (!p.is_object() || !p.contains("pipeline_test")) return "";
  const double mib = p.value("dose_bytes", 0.0) / (1024.0 * 1024.0);
  const json acc = p["pipeline_test"].value("pilot_accelerators", json::object());
  return fmt::format(
      "PIPELINE TEST: the bounded-reclaim dose ({:.0f} MiB) was chosen by the pilot rule from a pilot DB whose cases ran "
      "under {} and was planned with `harness plan --pipeline-test-dose`: it tests the pipeline; it is not a "
      "preregistered dose, and nothing here is evidence about the study's dose.",
      mib, acc.dump());
}

std::string campaign_kind(const std::map<std::string, std::string>& meta) {
  if (auto it = meta.find("kind"); it != meta.end() && !it->second.empty()) return it->second;
  const auto s = read_campaign_settings(meta);
  if (s.kind) return *s.kind;
  if (s.design_kind && *s.design_kind == "pilot") return "pilot";
  return "";
}

std::string report_title(const CampaignData& data) {
  const auto it = data.meta.find("name");
  const std::string name = it != data.meta.end() && !it->second.empty() ? it->second : data.db_path;
  const std::string kind = campaign_kind(data.meta);
  if (kind == "smoke") return fmt::format("Reclaim ablation: smoke run {} (mechanism check, not evidence)", name);
  if (kind == "ci") return fmt::format("Reclaim ablation: CI regression run {}", name);
  if (kind == "pilot") return fmt::format("Reclaim ablation: pilot campaign {} (matched-triplet tables)", name);
  if (kind == "confirmatory") return fmt::format("Reclaim ablation: confirmatory analysis of {}", name);
  return fmt::format("Reclaim ablation: analysis of campaign {} (kind not recorded)", name);
}

namespace {

/// Cases that ran under TCG.
int tcg_case_count(const CampaignData& data) {
  int tcg = 0;
  for (const auto& c : data.cases)
    if (c.accelerator == "tcg") ++tcg;
  return tcg;
}

/// Lost cases (lost after the pressure phase started).
int lost_case_count(const CampaignData& data) {
  int lost = 0;
  for (const auto& c : data.cases) lost += c.lost();
  return lost;
}

/// The warnings about what ran and what is recorded, in the report's order: TCG, overcommit,
/// a pipeline-test dose, infra_failed and missing cases, the loader's and the triplets' own,
/// lost cases, measurement quality.
void record_warnings(const CampaignData& data, const TripletSet& ts, Report& r) {
  if (const int tcg = tcg_case_count(data); tcg > 0)
    r.warnings.push_back(fmt::format(
        "{} case(s) ran under TCG (software emulation, no KVM): absolute timings are inflated under TCG; no timing "
        "claim should be made from them.", tcg));
  try {
    if (const auto w = overcommit_warning(data.db_path); !w.empty()) r.warnings.push_back(w);
  } catch (const std::exception&) {
    // advisory only: the tables above read the same DB, so a read error here loses nothing
    // they show; older DBs without the column are handled inside
  }
  if (const auto w = pipeline_test_dose_warning(data.meta); !w.empty()) r.warnings.push_back(w);
  if (!data.infra_failed.empty()) {
    std::string s = fmt::format("{} case(s) are infra_failed (the latest attempt failed before the pressure phase) and "
                                "not analysed:", data.infra_failed.size());
    for (const auto& id : data.infra_failed) s += " " + id;
    r.warnings.push_back(s);
  }
  if (!data.missing.empty()) {
    // An unfinished campaign (or one whose runs were lost): said first, with what it does to
    // the tables, which use two sets of cases until every block is complete.
    const std::size_t recorded = data.cases.size() + data.infra_failed.size();
    r.warnings.push_back(fmt::format(
        "CAMPAIGN NOT COMPLETE: {} of {} scheduled case(s) have a record ({} have none; `harness run` resumes it). "
        "Table 4, the verdict and the reclaim-execution and measurement tables use the {} complete {}(s) only; "
        "Tables 5, 5b, 6 and the mechanism table use every completed case, so until the campaign ends their arms "
        "may cover different regimes.",
        recorded, recorded + data.missing.size(), data.missing.size(), ts.triplets.size(), ts.unit));
    std::string s = fmt::format("{} scheduled case(s) have no case record (missing):", data.missing.size());
    for (const auto& id : data.missing) s += " " + id;
    r.warnings.push_back(s);
  }
  for (const auto& w : data.warnings) r.warnings.push_back(w);
  for (const auto& w : ts.warnings) r.warnings.push_back(w);
  if (const int lost = lost_case_count(data); lost > 0)
    r.warnings.push_back(fmt::format(
        "{} lost case(s) (lost after the pressure phase started): kept in their {}s with the worst observed p99 "
        "per canary imputed (flagged; docs/PROTOCOL.md assumption)", lost, ts.unit));
  for (const auto& w : measurement_warnings(triplet_cases(ts))) r.warnings.push_back(w);
}

/// The complete-case sensitivity analysis, when some block has a lost member.
std::optional<Sensitivity> complete_case_sensitivity(const TripletSet& ts, const PrimaryOptions& sopt) {
  int with_lost = 0;
  for (const auto& t : ts.triplets)
    with_lost += std::any_of(t.cases.begin(), t.cases.end(), [](const CaseSummary* c) { return c->lost(); });
  if (with_lost == 0) return std::nullopt;
  Sensitivity x;
  x.name = fmt::format("complete cases ({} {}(s) with a lost member left out)", with_lost, ts.unit);
  const TripletSet cc = without_lost_cases(ts);
  if (cc.triplets.empty()) x.why_none = "every " + ts.unit + " has a lost member";
  else x.pr = run_primary(cc, sopt);
  return x;
}

/// The warning of one case whose outcome the operator overrode; `original`: the campaign with
/// the original outcomes reinstated (what it imputes for a lost one).
std::string override_warning(const OverriddenCase& o, const CampaignData& original) {
  std::string p99 = o.original_p99_text();
  if (o.original_status == "lost") {  // imputed: what the reinstated campaign imputes for it
    p99.clear();
    for (const auto& c : original.cases)
      if (c.case_id == o.case_id)
        for (Canary k : {Canary::Compute, Canary::Sqlite})
          if (const auto& l = c.latency[static_cast<int>(k)])
            p99 += fmt::format("{}{} {:.3f} ms", p99.empty() ? "" : ", ", canary_name(k), l->p99_us / 1000.0);
    p99 = "imputed (worst observed): " + (p99.empty() ? std::string("n/a") : p99);
  }
  return fmt::format(
      "case {} ({}): its {} outcome was overridden by the operator (harness mark-infra --override-outcome, "
      "attempt {}, by {}: {}); original p99: {}; analysed now as {}. Table 4 also shows the estimates with the "
      "original outcomes reinstated (sensitivity; study: every case retains its original outcome).",
      o.case_id, o.configuration, o.original_status, o.attempt, o.operator_name.empty() ? "?" : o.operator_name,
      o.reason.empty() ? "(no reason recorded)" : o.reason, p99,
      o.status_now.empty() ? std::string("no case record") : o.status_now);
}

/// Overridden outcomes: the sensitivity analysis with the original outcomes reinstated (into
/// `sens`) and one warning per overridden case (into `r`).
void override_sensitivity(const CampaignData& data, const TripletSet& ts, const PrimaryOptions& sopt,
                          const std::vector<OverriddenCase>& overridden, std::vector<Sensitivity>& sens, Report& r) {
  if (overridden.empty()) return;
  std::vector<std::string> notes;
  const CampaignData original = with_original_outcomes(data, overridden, notes);
  const TripletSet ots = build_triplets(original);
  Sensitivity x;
  x.name = fmt::format("original outcomes reinstated ({} overridden case(s))", overridden.size());
  if (ots.triplets.empty()) x.why_none = "no complete " + ts.unit + " with the original outcomes";
  else x.pr = run_primary(ots, sopt);
  for (const auto& n : notes) x.note += (x.note.empty() ? "Original outcomes reinstated: " : " ") + n + ".";
  sens.push_back(std::move(x));
  for (const auto& o : overridden) r.warnings.push_back(override_warning(o, original));
}

/// What the design does to the estimate and the intervals: unequal strata (summary) and
/// undercoverage of small strata (warning).
void design_cautions(const PrimaryResult& pr, const TripletSet& ts, Report& r) {
  const int singles = static_cast<int>(std::count(pr.stratum_sizes.begin(), pr.stratum_sizes.end(), 1));
  if (singles > 0 && singles < static_cast<int>(pr.stratum_sizes.size()))
    r.summary.push_back(fmt::format(
        "Strata differ in size ({} of {} strata have one {}); strata keep equal weight in the estimate (study).",
        singles, pr.stratum_sizes.size(), ts.unit));
  if (pr.expected_coverage < pr.level - 0.005) {
    const auto* m = simulated_coverage_for(pr.stratum_sizes, pr.level);
    r.warnings.push_back(fmt::format(
        "Small-sample caution: with this design ({}) the prespecified {:.2f}% intervals are expected to cover only "
        "about {:.1f}% per comparison and all {} together at least {:.1f}% (analytic){}; the corrected secondary "
        "interval is expected to cover about {:.1f}% (design table; docs/PROTOCOL.md \"Design\").",
        design_text(pr.stratum_sizes), pr.level * 100, pr.expected_coverage * 100, pr.m, pr.coverage.joint * 100,
        m ? fmt::format("; measured by simulation at this design: {:.1f}% per comparison, {:.1f}% jointly",
                        m->plain_pooled * 100, m->plain_joint * 100)
          : std::string(),
        pr.expected_coverage_corrected * 100));
  }
}

/// The verdict first, then the per-treatment reading, ahead of what the summary holds; the
/// estimates last.
void verdict_summary(const PrimaryResult& pr, Report& r) {
  r.summary.insert(r.summary.begin(), "**Verdict (predefined rule, prespecified intervals):** " + pr.verdict.text);
  if (!pr.by_treatment.empty()) {
    std::string per =
        "**Per treatment (descriptive: the same rule over each treatment's own comparisons, on the family's "
        "intervals; the verdict above is the prespecified one):** ";
    for (std::size_t i = 0; i < pr.by_treatment.size(); ++i) {
      const auto& [t, v] = pr.by_treatment[i];
      per += fmt::format("{}{}: {}{}", i ? "; " : "", t, v.general_benefit ? "benefit" : "no general benefit",
                         v.harm.empty() ? "" : ", HARM (" + fmt::format("{}", fmt::join(v.harm, ", ")) + ")");
    }
    r.summary.insert(r.summary.begin() + 1, per + ".");
  }
  std::string s = "Estimates: ";
  for (std::size_t i = 0; i < pr.comparisons.size(); ++i) {
    const auto& c = pr.comparisons[i];
    s += fmt::format("{}{} {:.3f} [{:.3f}, {:.3f}] ({:+.1f}%)", i ? "; " : "", c.label, c.estimate, c.lower, c.upper,
                     c.percent_change);
  }
  r.summary.push_back(s + ".");
}

/// The report's tables, in order.
void report_tables(const CampaignData& data, const TripletSet& ts, const PrimaryResult& pr,
                   const std::vector<Sensitivity>& sens, Report& r) {
  const auto cases = triplet_cases(ts);
  r.tables.push_back(table1(data, cases, ts, pr.m));
  r.tables.push_back(table2(ts));
  r.tables.push_back(table4(pr, sens));
  r.tables.push_back(design_table(pr, ts));
  r.tables.push_back(absdiff(pr));
  const auto all = campaign_cases(data);
  r.tables.push_back(table5(all, ts.arms, ts.unit));
  r.tables.push_back(table5_usage(all, ts.arms));
  r.tables.push_back(table6(all, ts.arms));
  r.tables.push_back(mechanism(all, ts));
  r.tables.push_back(reclaim_execution_table(cases, ts.arms));
  r.tables.push_back(outcome_counts_table(data, ts));
  r.tables.push_back(attempts_table(data));
  r.tables.push_back(reclassifications_table(data));
  r.tables.push_back(measurement_quality_table(cases, ts.arms));
}

/// extra.verdict: the prespecified verdict and the per-treatment ones.
json verdict_json(const PrimaryResult& pr) {
  json bt = json::array();
  for (const auto& [t, v] : pr.by_treatment)
    bt.push_back({{"treatment", t}, {"general_benefit", v.general_benefit}, {"harm", v.harm}, {"failed", v.failed},
                  {"text", v.text}});
  return {{"assessable", pr.verdict.assessable}, {"general_benefit", pr.verdict.general_benefit},
          {"harm", pr.verdict.harm},             {"failed", pr.verdict.failed},
          {"text", pr.verdict.text},             {"by_treatment", bt}};
}

/// extra's first members: the DB, the estimates, the verdict and the design.
json primary_extra(const CampaignData& data, const TripletSet& ts, const PrimaryResult& pr) {
  json comps = json::array();
  for (const auto& c : pr.comparisons)
    comps.push_back({{"label", c.label}, {"estimate", c.estimate}, {"lower", c.lower}, {"upper", c.upper},
                     {"corrected_lower", c.corrected_lower}, {"corrected_upper", c.corrected_upper},
                     {"percent_change", c.percent_change}, {"triplets", c.triplets}});
  return {{"db", data.db_path}, {"level", pr.level}, {"replicates", pr.replicates}, {"seed", pr.seed},
          {"comparisons", comps}, {"verdict", verdict_json(pr)},
          {"expected_coverage", pr.expected_coverage}, {"expected_coverage_corrected", pr.expected_coverage_corrected},
          {"stratum_sizes", pr.stratum_sizes}, {"strata", ts.strata}, {"tcg_cases", tcg_case_count(data)},
          {"lost_cases", lost_case_count(data)}, {"excluded_triplets", ts.excluded}};
}

/// extra.sensitivity: each sensitivity analysis's estimates (or why there are none).
json sensitivity_json(const std::vector<Sensitivity>& sens) {
  json sj = json::array();
  for (const auto& x : sens) {
    json c = json::array();
    if (x.pr)
      for (const auto& k : x.pr->comparisons)
        c.push_back({{"label", k.label}, {"estimate", k.estimate}, {"lower", k.lower}, {"upper", k.upper},
                     {"triplets", k.triplets}});
    sj.push_back({{"analysis", x.name}, {"comparisons", c}, {"why_none", x.why_none}});
  }
  return sj;
}

/// extra.arms: policy, params and sha256 of each arm when the DB records them.
json arms_json(const CampaignData& data) {
  json arms = json::array();
  for (const auto& a : data.arms)
    arms.push_back({{"name", a.name},
                    {"policy", data.arms_recorded ? json(a.policy) : json(nullptr)},
                    {"params", data.arms_recorded ? json::parse(a.params_json, nullptr, false) : json(nullptr)},
                    {"sha256", data.arms_recorded ? json(a.sha256) : json(nullptr)}});
  return arms;
}

/// extra.family: the comparisons judged.
json family_json(const CampaignData& data, const PrimaryResult& pr) {
  json fam = json::array();
  for (const auto& c : pr.family)
    fam.push_back({{"label", c.label}, {"canary", canary_name(c.canary)}, {"treatment", c.treatment},
                   {"comparator", c.comparator}});
  return {{"m", pr.m}, {"study_family", pr.study_family}, {"comparisons", fam}, {"source", data.comparisons_source}};
}

/// extra.overridden_cases.
json overridden_json(const std::vector<OverriddenCase>& overridden) {
  json ov = json::array();
  for (const auto& o : overridden)
    ov.push_back({{"case_id", o.case_id}, {"original_status", o.original_status}, {"original", o.original},
                  {"status_now", o.status_now}, {"operator", o.operator_name}, {"reason", o.reason}});
  return ov;
}

/// Report::extra, the machine-readable side of the report.
json report_extra(const CampaignData& data, const TripletSet& ts, const PrimaryResult& pr,
                  const std::vector<Sensitivity>& sens, const std::vector<OverriddenCase>& overridden) {
  json extra = primary_extra(data, ts, pr);
  extra["sensitivity"] = sensitivity_json(sens);
  extra["arms"] = arms_json(data);
  extra["unit"] = ts.unit;  // the word for a block in this report's text
  extra["arms_source"] = data.arms_recorded ? "arms table"
                                            : "not recorded (no arms table, e.g. a version-5 DB read read-only): "
                                              "the study's arms found in the cases, in the study's order";
  extra["family"] = family_json(data, pr);
  extra["overridden_cases"] = overridden_json(overridden);
  extra["coverage"] = {{"per_comparison", pr.coverage.per_comparison}, {"joint", pr.coverage.joint},
                       {"corrected_per_comparison", pr.coverage.corrected_per_comparison},
                       {"corrected_joint", pr.coverage.corrected_joint}, {"df", pr.coverage.df}};
  json inc = json::array();
  for (const auto& i : ts.incomplete) inc.push_back({{"triplet", i.id}, {"never_run", i.never_run}});
  extra["incomplete_triplets"] = inc;
  return extra;
}

}  // namespace

Report build_analysis_report(const CampaignData& data, const TripletSet& ts, const PrimaryResult& pr) {
  Report r;
  r.title = report_title(data);
  record_warnings(data, ts, r);
  // Sensitivity analyses of Table 4 (never in the verdict): same estimator, B and seed.
  const PrimaryOptions sopt{{pr.replicates, pr.seed, 0}, pr.alpha, pr.m};
  std::vector<Sensitivity> sens;
  if (auto x = complete_case_sensitivity(ts, sopt)) sens.push_back(std::move(*x));
  const auto overridden = overridden_cases(data);
  override_sensitivity(data, ts, sopt, overridden, sens, r);
  design_cautions(pr, ts, r);
  verdict_summary(pr, r);
  report_tables(data, ts, pr, sens, r);
  r.extra = report_extra(data, ts, pr, sens, overridden);
  return r;
}

Report analyze_campaign(const std::string& db_path, const PrimaryOptions& opt) {
  const CampaignData data = load_campaign(db_path);
  const TripletSet ts = build_triplets(data);
  if (ts.triplets.empty()) {
    std::string why = fmt::format("{}: no complete matched {} to analyse ({} completed case(s))", db_path, ts.unit,
                                  data.cases.size());
    for (const auto& w : ts.warnings) why += "\n  " + w;
    throw std::invalid_argument(why);
  }
  const PrimaryResult pr = run_primary(ts, opt);
  return build_analysis_report(data, ts, pr);
}

}  // namespace analysis
