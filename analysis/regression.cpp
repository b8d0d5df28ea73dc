// A/B regression comparison (see regression.hpp).
#include "analysis/regression.hpp"

#include "analysis/bootstrap.hpp"
#include "analysis/campaign_data.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace analysis {
namespace {

/// One case's value of metric `name` in the metric's unit; nullopt = not measured.
std::optional<double> metric_value(const CaseSummary& c, const std::string& name) {
  const auto& o = c.outcome;
  auto finite = [](std::optional<double> v) { return v && std::isfinite(*v) ? v : std::nullopt; };
  // The case's first memory.reclaim write (the controller issues one per case: SPEC.md).
  const ReclaimRecord* r = o.reclaim.empty() ? nullptr : &o.reclaim.front();
  if (name == "reclaim_duration") return r ? std::optional<double>(static_cast<double>(r->duration_ns) / 1e9) : std::nullopt;
  if (name == "achieved_ratio") {
    if (!r || !r->achieved_bytes || r->requested_bytes <= 0) return std::nullopt;
    return static_cast<double>(*r->achieved_bytes) / static_cast<double>(r->requested_bytes);
  }
  if (name == "trigger_delay") return finite(o.trigger_delay_s);
  if (name == "bg_psi_some") return finite(c.mech.bg_some_stall_s);
  if (name == "bg_psi_full") return finite(c.mech.bg_full_stall_s);
  if (name == "swapout") return finite(c.mech.swapout_kib);
  if (name == "refaults") return finite(c.mech.refaults);
  if (name == "compute_p99" || name == "sqlite_p99") {
    const auto& l = c.latency[static_cast<int>(name == "compute_p99" ? Canary::Compute : Canary::Sqlite)];
    return l ? finite(l->p99_us / 1000.0) : std::nullopt;  // us -> ms
  }
  if (name == "restoration_time") return finite(o.restoration_s);
  throw std::logic_error("regression metric without a value rule: " + name);
}

/// A case that may enter a pair: completed, usable, with spec_json.variant {name, pair_id}.
struct Member {
  const CaseSummary* c = nullptr;
  std::string stratum;  ///< vm/regime/configuration
};

/// pair_id -> member of `variant` in `d` (a duplicated pair_id keeps the first; none expected).
std::map<std::string, Member> members(const CampaignData& d, const std::string& variant) {
  std::map<std::string, Member> out;
  for (const auto& c : d.cases) {
    if (c.status != "completed" || !c.usable || !c.spec.is_object()) continue;
    const auto it = c.spec.find("variant");
    if (it == c.spec.end() || !it->is_object()) continue;
    const auto n = it->find("name"), p = it->find("pair_id");
    if (n == it->end() || p == it->end() || !n->is_string() || !p->is_string()) continue;
    if (n->get<std::string>() != variant) continue;
    out.emplace(p->get<std::string>(), Member{&c, c.vm + "/" + c.regime + "/" + c.configuration});
  }
  return out;
}

std::string num_text(double v) {
  if (v >= std::numeric_limits<double>::max()) return "inf";
  return std::abs(v) >= 1000 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

}  // namespace

// regression_metrics(): analysis/regression_metrics.cpp (the campaign loader validates with it).

bool is_regression(double lower, double upper, std::optional<double> max_ratio, std::optional<double> min_ratio) {
  return (max_ratio && lower > *max_ratio) || (min_ratio && upper < *min_ratio);
}

std::string metric_verdict(double ratio, double lower, double upper, std::optional<double> max_ratio,
                           std::optional<double> min_ratio) {
  if (is_regression(lower, upper, max_ratio, min_ratio)) return "regression";
  if ((max_ratio && ratio > *max_ratio) || (min_ratio && ratio < *min_ratio)) return "inconclusive";
  return "ok";
}

std::string change_of(double lower, double upper) {
  if (lower > 1) return "higher";
  if (upper < 1) return "lower";
  return "none shown";
}

std::vector<MetricComparison> compare_variants(const std::string& baseline_db, const std::string& candidate_db,
                                               const harness::campaign::Campaign& c) {
  if (c.design != "ab-pairs")
    throw std::runtime_error(c.file + ": design.kind is " + c.design + ", not ab-pairs: no variants to compare");
  const auto& metrics = regression_metrics();
  std::map<std::string, const harness::campaign::Tolerance*> tol;
  for (const auto& t : c.tolerances) {
    bool known = false;
    for (const auto& m : metrics) known = known || t.metric == m.name;
    if (!known) throw std::runtime_error(c.file + ": regression.tolerances." + t.metric + ": not a regression metric");
    tol[t.metric] = &t;
  }
  // Bonferroni over the metrics that have a tolerance (m >= 1).
  const double level = simultaneous_level(c.regression_alpha, std::max<int>(1, static_cast<int>(tol.size())));

  const CampaignData base = load_campaign(baseline_db);
  const CampaignData cand_own = baseline_db == candidate_db ? CampaignData{} : load_campaign(candidate_db);
  const CampaignData& cand = baseline_db == candidate_db ? base : cand_own;
  const auto b = members(base, "baseline");
  const auto k = members(cand, "candidate");

  std::vector<MetricComparison> out;
  for (const auto& m : metrics) {
    MetricComparison r;
    r.metric = m.name;
    r.unit = m.unit;
    r.level = level;
    if (const auto t = tol.find(m.name); t != tol.end()) {
      r.max_ratio = t->second->max_ratio;
      r.min_ratio = t->second->min_ratio;
    }
    // Pairs with the metric on both members, labelled by stratum (strata in name order).
    std::vector<std::array<double, 2>> rows;
    std::vector<std::string> row_stratum;
    std::set<std::string> strata_names;
    for (const auto& [pair, mb] : b) {
      const auto mc = k.find(pair);
      if (mc == k.end()) continue;
      const auto vb = metric_value(*mb.c, m.name), vc = metric_value(*mc->second.c, m.name);
      if (!vb || !vc) continue;
      rows.push_back({*vb, *vc});
      row_stratum.push_back(mb.stratum);
      strata_names.insert(mb.stratum);
    }
    r.pairs = static_cast<int>(rows.size());
    r.strata = static_cast<int>(strata_names.size());
    if (rows.empty()) {
      r.verdict = "no data";
      r.detail = "no pair with both members completed and the metric measured";
      out.push_back(std::move(r));
      continue;
    }
    std::map<std::string, int> label;
    for (const auto& s : strata_names) label.emplace(s, static_cast<int>(label.size()));
    Eigen::MatrixXd data(static_cast<Eigen::Index>(rows.size()), 2);
    std::vector<int> strata;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      data(static_cast<Eigen::Index>(i), 0) = rows[i][0];
      data(static_cast<Eigen::Index>(i), 1) = rows[i][1];
      strata.push_back(label.at(row_stratum[i]));
    }
    const Eigen::VectorXd point = stratified_mean(data, strata);
    r.baseline_mean = point(0);
    r.candidate_mean = point(1);
    if (!(point(0) > 0)) {
      r.verdict = "no data";
      r.detail = fmt::format("baseline mean is {} {}: the ratio is undefined ({} pairs)", num_text(point(0)), r.unit, r.pairs);
      out.push_back(std::move(r));
      continue;
    }
    r.ratio = point(1) / point(0);
    BootstrapOptions bo;
    bo.replicates = c.bootstrap_replicates;
    bo.seed = c.seed;
    const auto boot = stratified_bootstrap(data, strata, bo);
    // Replicate ratio = candidate / baseline mean. A replicate whose baseline mean is 0 (every
    // resampled pair 0 in every stratum; counters can be 0): ratio +inf (shown "inf") when the
    // candidate mean is > 0, 1 when both are 0 (no change) (ours).
    Eigen::VectorXd rep(boot.plain.rows());
    for (Eigen::Index i = 0; i < rep.size(); ++i) {
      const double mb = boot.plain(i, 0), mc = boot.plain(i, 1);
      rep(i) = mb > 0 ? mc / mb : mc > 0 ? std::numeric_limits<double>::max() : 1.0;
    }
    const auto iv = percentile_interval(rep, level);
    r.lower = iv.lower;
    r.upper = iv.upper;
    r.change = change_of(iv.lower, iv.upper);
    const std::string what = fmt::format("ratio {} [{}, {}] at {:g}%, {} pairs in {} strata (baseline {} {}, "
                                         "candidate {} {})",
                                         num_text(*r.ratio), num_text(iv.lower), num_text(iv.upper), level * 100, r.pairs, r.strata,
                                         num_text(point(0)), r.unit, num_text(point(1)), r.unit);
    std::string allowed;
    if (r.max_ratio) allowed += "max_ratio " + num_text(*r.max_ratio);
    if (r.min_ratio) allowed += std::string(allowed.empty() ? "" : ", ") + "min_ratio " + num_text(*r.min_ratio);
    if (!r.max_ratio && !r.min_ratio) {
      r.verdict = "reported";
      r.detail = what + "; no tolerance";
    } else {
      r.verdict = metric_verdict(*r.ratio, iv.lower, iv.upper, r.max_ratio, r.min_ratio);
      if (r.verdict == "regression")
        r.detail = what + (r.max_ratio && iv.lower > *r.max_ratio
                               ? "; the whole interval lies above max_ratio " + num_text(*r.max_ratio)
                               : "; the whole interval lies below min_ratio " + num_text(*r.min_ratio));
      else if (r.verdict == "inconclusive")
        r.detail = what + "; the ratio is past the tolerance " + allowed +
                   " but the interval is not wholly beyond it: more pairs would decide";
      else
        r.detail = what + "; tolerance " + allowed + " (a regression needs the whole interval beyond it)";
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace analysis
