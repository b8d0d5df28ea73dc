// The pairs of an A/B campaign read from its DB (see ab_pairs.hpp).
#include "analysis/data/ab_pairs.hpp"

#include "analysis/data/campaign_data.hpp"

#include <cmath>
#include <map>
#include <optional>
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

}  // namespace

// regression_metrics(): analysis/data/regression_metrics.cpp (the campaign loader validates with it).

std::map<std::string, MetricPairs> paired_values(const std::string& baseline_db, const std::string& candidate_db) {
  const CampaignData base = load_campaign(baseline_db);
  const CampaignData cand_own = baseline_db == candidate_db ? CampaignData{} : load_campaign(candidate_db);
  const CampaignData& cand = baseline_db == candidate_db ? base : cand_own;
  const auto b = members(base, "baseline");
  const auto k = members(cand, "candidate");
  std::map<std::string, MetricPairs> out;
  for (const auto& m : regression_metrics()) {
    MetricPairs& p = out[m.name];
    for (const auto& [pair, mb] : b) {
      const auto mc = k.find(pair);
      if (mc == k.end()) continue;
      const auto vb = metric_value(*mb.c, m.name), vc = metric_value(*mc->second.c, m.name);
      if (!vb || !vc) continue;
      p.rows.push_back({*vb, *vc});
      p.stratum.push_back(mb.stratum);
      p.repeat.push_back(mb.c->repeat);
    }
  }
  return out;
}

}  // namespace analysis
