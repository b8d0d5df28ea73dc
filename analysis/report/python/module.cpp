// pybind11 module `harness_analysis` (built for Debian's /usr/bin/python3): load a campaign DB into
// numpy arrays, run the stratified bootstrap and the primary analysis from Python, read one case's
// time series for figures, and write synthetic campaign DBs. Thin wrappers over hk_analysis.
#include "analysis/report/analysis_report.hpp"
#include "analysis/stats/bootstrap.hpp"
#include "analysis/data/campaign_data.hpp"
#include "analysis/data/case_columns.hpp"
#include "analysis/tables/pilot.hpp"
#include "analysis/tables/primary.hpp"
#include "analysis/stats/quantile.hpp"
#include "analysis/simulate/synthetic.hpp"
#include "analysis/data/triplets.hpp"
#include "results/db.hpp"
#include "results/provenance.hpp"
#include "results/store/cases.hpp"
#include "results/store/controller_events.hpp"
#include "results/store/phases.hpp"
#include "results/store/reclaim_actions.hpp"
#include "results/store/telemetry.hpp"

#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <limits>
#include <tuple>

namespace py = pybind11;
using namespace analysis;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

py::dict campaign_arrays(const std::string& db) {
  const CampaignData data = load_campaign(db);
  const TripletSet ts = build_triplets(data);
  const CaseColumns col = case_columns(data);
  py::dict cases;
  cases["case_id"] = col.case_id;
  cases["vm"] = col.vm;
  cases["regime"] = col.regime;
  cases["configuration"] = col.configuration;
  cases["triplet_id"] = col.triplet_id;
  cases["accelerator"] = col.accelerator;
  cases["usable"] = py::array(py::cast(col.usable));
  cases["status"] = col.status;
  cases["lost"] = py::array(py::cast(col.lost));
  cases["compute_p99_flagged"] = py::array(py::cast(col.p99_flagged[0]));
  cases["sqlite_p99_flagged"] = py::array(py::cast(col.p99_flagged[1]));
  cases["trigger_delay_s"] = py::array(py::cast(col.trigger_delay_s));
  cases["reclaim_duration_ms"] = py::array(py::cast(col.reclaim_duration_ms));
  cases["reclaim_achieved_ratio"] = py::array(py::cast(col.reclaim_achieved_ratio));
  cases["reclaim_conservative_ratio"] = py::array(py::cast(col.reclaim_conservative_ratio));
  for (int k = 0; k < 2; ++k)
    for (int q = 0; q < 3; ++q) cases[py::str(quantile_column(k, q))] = py::array(py::cast(col.quantiles[k][q]));
  py::dict out;
  out["cases"] = cases;
  std::vector<std::string> tids, labels;
  for (const auto& t : ts.triplets) tids.push_back(t.id);
  for (const auto& d : ts.family()) labels.push_back(d.label);
  out["arms"] = ts.arms;
  out["triplet_id"] = tids;
  out["comparisons"] = labels;
  out["log_ratios"] = log_ratio_matrix(ts);
  out["abs_diffs_us"] = abs_diff_matrix(ts);
  out["strata"] = py::array(py::cast(stratum_labels(ts)));
  out["strata_names"] = ts.strata;
  std::vector<std::string> warnings = data.warnings;
  warnings.insert(warnings.end(), ts.warnings.begin(), ts.warnings.end());
  out["warnings"] = warnings;
  out["infra_failed"] = data.infra_failed;
  out["missing"] = data.missing;
  out["meta"] = data.meta;
  return out;
}

py::dict bootstrap_py(const Eigen::MatrixXd& data, const std::vector<int>& strata, int replicates,
                      std::uint64_t seed, unsigned threads) {
  BootstrapResult r;
  {
    py::gil_scoped_release nogil;
    r = stratified_bootstrap(data, strata, {replicates, seed, threads});
  }
  py::dict d;
  d["point"] = r.point;
  d["plain"] = r.plain;
  d["corrected"] = r.corrected;
  d["stratum_sizes"] = r.stratum_sizes;
  return d;
}

py::dict primary_py(const std::string& db, int replicates, std::uint64_t seed, unsigned threads) {
  const CampaignData data = load_campaign(db);
  const TripletSet ts = build_triplets(data);
  PrimaryOptions opt;
  opt.bootstrap = {replicates, seed, threads};
  PrimaryResult pr;
  {
    py::gil_scoped_release nogil;
    pr = run_primary(ts, opt);
  }
  py::list comps;
  for (const auto& c : pr.comparisons) {
    py::dict x;
    x["label"] = c.label;
    x["estimate"] = c.estimate;
    x["lower"] = c.lower;
    x["upper"] = c.upper;
    x["corrected_lower"] = c.corrected_lower;
    x["corrected_upper"] = c.corrected_upper;
    x["percent_change"] = c.percent_change;
    x["triplets"] = c.triplets;
    comps.append(x);
  }
  py::dict d;
  d["comparisons"] = comps;
  d["arms"] = pr.arms;
  d["study_family"] = pr.study_family;
  d["unit"] = pr.unit;
  d["level"] = pr.level;
  d["verdict"] = pr.verdict.text;
  d["assessable"] = pr.verdict.assessable;
  // A family of several treatments has one verdict per treatment and none over the family.
  d["per_treatment"] = pr.per_treatment;
  d["general_benefit"] = pr.per_treatment ? py::object(py::none()) : py::object(py::bool_(pr.verdict.general_benefit));
  d["harm"] = pr.verdict.harm;
  py::list by_treatment;
  for (const auto& [t, v] : pr.by_treatment) {
    py::dict x;
    x["treatment"] = t;
    x["general_benefit"] = v.general_benefit;
    x["harm"] = v.harm;
    x["text"] = v.text;
    by_treatment.append(x);
  }
  d["by_treatment"] = by_treatment;
  d["expected_coverage"] = pr.expected_coverage;
  d["expected_coverage_corrected"] = pr.expected_coverage_corrected;
  d["stratum_sizes"] = pr.stratum_sizes;
  d["replicates_log"] = pr.log_bootstrap.plain;
  return d;
}

// One case's time series: telemetry columns, canary responses, controller events, phases.
// Times in seconds relative to the pressure-phase start. canaries = false leaves "canaries"
// empty (no request rows read: the zram time course needs only the telemetry of every case).
/// The telemetry columns case_timeseries returns (and telemetry_column accepts).
constexpr const char* kTelemetryColumns[] = {"bg_some_us",           "bg_full_us",           "fg_some_us",
                                             "bg_current_bytes",     "fg_current_bytes",     "bg_swap_current_bytes",
                                             "zram_orig_data_bytes", "zram_compr_data_bytes", "zram_mem_used_bytes",
                                             "swapfile_used_kib",    "zram_swap_used_kib"};

/// One telemetry column of each listed case, on one connection: [(t_s, values)], times in s from
/// that case's pressure-phase start, NULL = NaN; the same numbers as case_timeseries(...)["telemetry"]
/// gives case by case (the zram time course draws every case's series).
py::list telemetry_column(const std::string& db_path, const std::vector<std::string>& case_ids,
                          const std::string& column) {
  bool known = false;
  for (auto c : kTelemetryColumns) known = known || column == c;
  if (!known) throw std::invalid_argument("telemetry_column: unknown column " + column);
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  py::list out;
  for (const auto& case_id : case_ids) {
    const auto phases = results::read_phases(db, case_id);
    std::int64_t t0 = 0;
    for (const auto& p : phases)
      if (p.phase == "pressure") t0 = p.start_ns;
    if (phases.empty()) throw std::invalid_argument("case " + case_id + " not found in " + db_path + " (no phases)");
    std::vector<double> t, v;
    results::for_each_telemetry(db, case_id, std::nullopt, [&](const results::TelemetryRow& r) {
      t.push_back((r.t_ns - t0) / 1e9);
      const auto x = results::telemetry_value(r, column);
      v.push_back(x ? static_cast<double>(*x) : kNaN);
    });
    out.append(py::make_tuple(py::array(py::cast(t)), py::array(py::cast(v))));
  }
  return out;
}

/// The case's phases as {phase: (start_s, end_s)} from the pressure-phase start, which is
/// returned in `t0` (0 without a pressure phase); throws std::invalid_argument without phases.
py::dict case_phases_py(results::Db& db, const std::string& db_path, const std::string& case_id, std::int64_t& t0) {
  py::dict phases;
  const auto rows = results::read_phases(db, case_id);
  for (auto& r : rows)
    if (r.phase == "pressure") t0 = r.start_ns;
  for (auto& r : rows)
    phases[py::str(r.phase)] = py::make_tuple((r.start_ns - t0) / 1e9, r.end_ns ? (*r.end_ns - t0) / 1e9 : kNaN);
  if (rows.empty()) throw std::invalid_argument("case " + case_id + " not found in " + db_path + " (no phases)");
  return phases;
}

/// configuration, vm, regime and accelerator of the case into `out` (nothing when it has no row).
void case_identity_py(results::Db& db, const std::string& case_id, py::dict& out) {
  if (const auto c = results::read_case(db, case_id)) {
    out["configuration"] = c->configuration;
    out["vm"] = c->vm;
    out["regime"] = c->regime;
    out["accelerator"] = c->accelerator.value_or("unknown");
  }
}

/// {t_s, <column>: values} of the telemetry columns (kTelemetryColumns), NaN = NULL.
py::dict case_telemetry_py(results::Db& db, const std::string& case_id, std::int64_t t0) {
  const auto& cols = kTelemetryColumns;
  std::vector<double> t;
  std::vector<std::vector<double>> v(std::size(cols));
  results::for_each_telemetry(db, case_id, std::nullopt, [&](const results::TelemetryRow& r) {
    t.push_back((r.t_ns - t0) / 1e9);
    for (std::size_t j = 0; j < std::size(cols); ++j) {
      const auto x = results::telemetry_value(r, cols[j]);
      v[j].push_back(x ? static_cast<double>(*x) : kNaN);
    }
  });
  py::dict tel;
  tel["t_s"] = py::array(py::cast(t));
  for (std::size_t j = 0; j < std::size(cols); ++j) tel[py::str(cols[j])] = py::array(py::cast(v[j]));
  return tel;
}

/// {canary: {scheduled_s, response_us, censored}}; a never-completed request gets its censored
/// lower bound (observation end - scheduled: the restoration start, else the latest phase end).
py::dict case_canaries_py(results::Db& db, const std::string& db_path, const std::string& case_id, std::int64_t t0) {
  // Observation end: the restoration's start, else the latest phase end (a phase without an end: its start).
  std::optional<std::int64_t> obs_end, latest;
  for (const auto& p : results::read_phases(db, case_id)) {
    if (p.phase == "restoration") obs_end = p.start_ns;
    latest = std::max(latest.value_or(p.end_ns.value_or(p.start_ns)), p.end_ns.value_or(p.start_ns));
  }
  if (!obs_end) obs_end = latest;
  py::dict can;
  for (Canary k : {Canary::Compute, Canary::Sqlite}) {
    const auto reqs = load_requests(db_path, case_id, k);
    std::vector<double> s, r;
    std::vector<bool> censored;
    for (const auto& q : reqs) {
      s.push_back((q.scheduled_ns - t0) / 1e9);
      censored.push_back(!q.completion_ns);
      r.push_back(q.completion_ns ? (*q.completion_ns - q.scheduled_ns) / 1e3
                                  : obs_end ? (*obs_end - q.scheduled_ns) / 1e3 : kNaN);
    }
    py::dict d;
    d["scheduled_s"] = py::array(py::cast(s));
    d["response_us"] = py::array(py::cast(r));
    d["censored"] = py::array(py::cast(censored));
    can[py::str(canary_name(k))] = d;
  }
  return can;
}

/// [(t_s, kind)] of the controller events other than windows.
py::list case_events_py(results::Db& db, const std::string& case_id, std::int64_t t0) {
  py::list ev;
  for (const auto& e : results::events_except_kind(db, case_id, "window"))
    ev.append(py::make_tuple((e.t_ns - t0) / 1e9, e.kind));
  return ev;
}

/// [(start_s, end_s, requested_bytes, errno, achieved_bytes or None)] of the memory.reclaim writes.
py::list case_reclaim_py(results::Db& db, const std::string& case_id, std::int64_t t0) {
  py::list ra;
  for (const auto& w : results::read_reclaim_actions(db, case_id))
    ra.append(py::make_tuple((w.start_ns - t0) / 1e9, (w.end_ns - t0) / 1e9, w.requested_bytes, w.write_errno,
                             w.achieved_bytes ? py::cast(*w.achieved_bytes) : py::none()));
  return ra;
}

py::dict case_timeseries(const std::string& db_path, const std::string& case_id, bool canaries) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  py::dict out;
  std::int64_t t0 = 0;
  out["phases"] = case_phases_py(db, db_path, case_id, t0);
  case_identity_py(db, case_id, out);
  out["telemetry"] = case_telemetry_py(db, case_id, t0);
  out["canaries"] = canaries ? case_canaries_py(db, db_path, case_id, t0) : py::dict();
  out["events"] = case_events_py(db, case_id, t0);
  out["reclaim_actions"] = case_reclaim_py(db, case_id, t0);
  return out;
}

/// pilot(db): the pilot rule's choice and each dose (Table 3) as a dict.
py::dict pilot_py(const std::string& db) {
  const auto r = select_dose(db);
  py::dict d;
  d["chosen_bytes"] = r.chosen_bytes ? py::cast(*r.chosen_bytes) : py::none();
  py::list doses;
  for (const auto& x : r.doses) {
    py::dict e;
    e["dose_bytes"] = x.dose_bytes;
    e["eligible"] = x.eligible;
    e["failed"] = x.failed;
    e["worst_duration_s"] = x.worst_duration_s ? py::cast(*x.worst_duration_s) : py::none();
    e["min_achieved_ratio"] = x.min_achieved_ratio ? py::cast(*x.min_achieved_ratio) : py::none();
    doses.append(e);
  }
  d["doses"] = doses;
  return d;
}

/// An extra arm as Python passes it: (name, policy, params_json, (log effect compute, sqlite), like).
using ExtraArmPy = std::tuple<std::string, std::string, std::string, std::array<double, 2>, int>;

/// write_synthetic(...): a synthetic campaign DB (SyntheticOptions); the canary_requests row count.
std::int64_t write_synthetic_py(const std::string& path, std::uint64_t seed, int vms, int per_stratum,
                                std::array<double, 4> ratios, double case_sd, int pressure_s, std::string accelerator,
                                const std::vector<ExtraArmPy>& extra_arms, std::vector<std::string> comparisons,
                                std::string campaign_yaml) {
  SyntheticOptions o;
  o.seed = seed;
  o.vms = vms;
  o.triplets_per_stratum = per_stratum;
  o.true_ratios = ratios;
  o.case_sd = case_sd;
  o.pressure_s = pressure_s;
  o.accelerator = accelerator;
  for (const auto& [name, policy, params, effect, like] : extra_arms)
    o.extra_arms.push_back({name, policy, params, effect, like});
  o.comparisons = std::move(comparisons);
  o.write_arms = !o.extra_arms.empty();
  o.campaign_yaml = std::move(campaign_yaml);
  return write_synthetic_campaign(path, o);
}

/// write_synthetic_pilot(...): doses as (dose_bytes, worst_duration_s, min_achieved_ratio), 10 s of pressure.
std::int64_t write_synthetic_pilot_py(const std::string& path,
                                      const std::vector<std::tuple<std::int64_t, double, double>>& doses,
                                      std::uint64_t seed, const std::string& campaign_yaml) {
  std::vector<SyntheticDose> v;
  for (const auto& [bytes, dur, ratio] : doses) {
    SyntheticDose d;
    d.dose_bytes = bytes;
    d.worst_duration_s = dur;
    d.min_achieved_ratio = ratio;
    v.push_back(d);
  }
  return write_synthetic_pilot(path, v, seed, 10, campaign_yaml);
}

/// write_synthetic_ab(...): a synthetic A/B campaign DB (SyntheticAbOptions).
std::int64_t write_synthetic_ab_py(const std::string& path, std::uint64_t seed, int vms, int pairs_per_stratum,
                                   double p99_ratio, double stall_ratio, double reclaim_ratio,
                                   const std::string& campaign, const std::string& campaign_yaml) {
  SyntheticAbOptions o;
  o.seed = seed;
  o.vms = vms;
  o.pairs_per_stratum = pairs_per_stratum;
  o.p99_ratio = p99_ratio;
  o.stall_ratio = stall_ratio;
  o.reclaim_ratio = reclaim_ratio;
  o.campaign = campaign;
  o.campaign_yaml = campaign_yaml;
  return write_synthetic_ab(path, o);
}

/// The analysis entry points: campaign arrays, bootstrap, primary analysis, one case's series,
/// telemetry columns, the quantile, the pilot rule.
void def_analysis(py::module_& m) {
  m.def(
      "synthetic_banner",
      [](const std::string& db) {
        results::Db d(db, results::Db::Mode::ReadOnly);
        return results::is_synthetic_db(d) ? results::synthetic_banner() : std::string();
      },
      py::arg("db"), "The SYNTHETIC DATA banner when `db` was written by the synthetic generator, else \"\".");
  m.def("load_campaign", &campaign_arrays, py::arg("db"),
        "Per-case p50/p95/p99 (us) per canary (censored: lower bound, <canary>_p99_flagged; lost: imputed), status, "
        "trigger delay (s), reclaim write duration (ms), achieved and conservative achieved / requested (NaN = not "
        "measured), and the T x 4 log-ratio and T x 8 absolute-difference (us) matrices of complete matched triplets "
        "with stratum labels.");
  m.def("bootstrap", &bootstrap_py, py::arg("data"), py::arg("strata"), py::arg("replicates") = 10000,
        py::arg("seed") = 1, py::arg("threads") = 0,
        "Stratified bootstrap of the mean over strata of stratum means: returns point (K), plain (B x K), "
        "corrected (B x K). Bit-identical for a seed whatever the thread count.");
  m.def("primary", &primary_py, py::arg("db"), py::arg("replicates") = 10000, py::arg("seed") = 1,
        py::arg("threads") = 0, "Table 4: four ratios, 98.75% intervals, corrected intervals, verdict.");
  m.def("case_timeseries", &case_timeseries, py::arg("db"), py::arg("case_id"), py::arg("canaries") = true,
        "One case's telemetry, canary responses (us; canaries=False: none read, an empty dict), controller events "
        "and reclaim actions; times in s from the pressure-phase start.");
  m.def("telemetry_column", &telemetry_column, py::arg("db"), py::arg("case_ids"), py::arg("column"),
        "One telemetry column of each listed case, read on one connection: a list of (t_s, values) in the cases' "
        "order, times in s from each case's pressure-phase start, NaN = NULL (as case_timeseries gives them).");
  m.def("quantile7", [](std::vector<double> v, double p) { return quantile7(v, p); }, py::arg("values"), py::arg("p"),
        "Type-7 quantile (numpy's default).");
  m.def("pilot", &pilot_py, py::arg("db"), "Pilot dose selection (Table 3).");
}

/// The synthetic DB writers (analysis/simulate/synthetic.hpp).
void def_synthetic(py::module_& m) {
  m.def("write_synthetic", &write_synthetic_py, py::arg("path"), py::arg("seed") = 1, py::arg("vms") = 5,
        py::arg("per_stratum") = 3, py::arg("true_ratios") = std::array<double, 4>{0.938, 0.704, 0.993, 0.765},
        py::arg("case_sd") = 0.05, py::arg("pressure_s") = 30, py::arg("accelerator") = "kvm",
        py::arg("extra_arms") = std::vector<ExtraArmPy>{}, py::arg("comparisons") = std::vector<std::string>{},
        py::arg("campaign_yaml") = "",
        "Writes a synthetic campaign DB with known true ratios; returns the canary_requests row count. extra_arms: "
        "a k-arm campaign, arms after the study's three as (name, policy, params_json, (log effect compute, sqlite), "
        "like) (analysis/simulate/synthetic.hpp SyntheticArm), the arms table written: each arm's p99 is static zram's p99 "
        "times exp(its log effect) whatever `like` says, so its true ratio to static zram is exp(effect); `like` "
        "(0 static zram, 1 delayed activation, 2 bounded reclaim) picks only the mechanism rows it gets (trigger, "
        "zram swapped on after the trigger, one memory.reclaim write of the dose); comparisons: the plan's analysis.comparisons (spellings of analysis/data/arms.hpp); "
        "campaign_yaml: a campaign file's text stored as the plan (`harness compare` lists its settings).");
  m.def("write_synthetic_pilot", &write_synthetic_pilot_py, py::arg("path"), py::arg("doses"), py::arg("seed") = 1,
        py::arg("campaign_yaml") = "",
        "Writes a synthetic pilot DB; doses = [(dose_bytes, worst_duration_s, min_achieved_ratio), ...]; "
        "campaign_yaml: the pilot campaign's text stored as its plan (a confirmatory campaign's from_pilot "
        "compares its settings: pass campaigns/pilot.yaml's text).");
  m.def("write_synthetic_ab", &write_synthetic_ab_py, py::arg("path"), py::arg("seed") = 1, py::arg("vms") = 2,
        py::arg("pairs_per_stratum") = 3, py::arg("p99_ratio") = 1.0, py::arg("stall_ratio") = 1.0,
        py::arg("reclaim_ratio") = 1.0, py::arg("campaign") = "synthetic-ab", py::arg("campaign_yaml") = "",
        "Writes a synthetic A/B campaign DB (baseline/candidate pairs, candidate = baseline x the ratios); "
        "campaign_yaml: the campaign file's text, stored as the plan (`harness check --judge` compares its design); "
        "returns the canary_requests row count.");
}

}  // namespace

PYBIND11_MODULE(harness_analysis, m) {
  m.doc() = "Reclaim-ablation analysis (C++ hk_analysis): campaign DB -> numpy, stratified bootstrap, primary analysis";
  def_analysis(m);
  def_synthetic(m);
}
