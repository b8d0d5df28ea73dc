// Per-case figure columns (see case_columns.hpp).
#include "analysis/data/case_columns.hpp"

#include <cmath>
#include <limits>

namespace analysis {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

nlohmann::json numbers(const std::vector<double>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (double x : v) a.push_back(std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr));
  return a;
}
}  // namespace

std::string quantile_column(int canary, int q) {
  static const char* qn[3] = {"p50_us", "p95_us", "p99_us"};
  return std::string(canary_name(static_cast<Canary>(canary))) + "_" + qn[q];
}

CaseColumns case_columns(const CampaignData& data) {
  CaseColumns o;
  for (const auto& c : data.cases) {
    o.case_id.push_back(c.case_id);
    o.vm.push_back(c.vm);
    o.regime.push_back(c.regime);
    o.configuration.push_back(c.configuration);
    o.triplet_id.push_back(c.triplet_id);
    o.accelerator.push_back(c.accelerator);
    o.usable.push_back(c.usable);
    o.status.push_back(c.status);
    o.lost.push_back(c.lost());
    o.trigger_delay_s.push_back(c.outcome.trigger_delay_s.value_or(kNaN));
    const ReclaimRecord* r = c.outcome.reclaim.empty() ? nullptr : &c.outcome.reclaim.front();
    o.reclaim_duration_ms.push_back(r ? r->duration_ns / 1e6 : kNaN);
    auto ratio = [&](const std::optional<std::int64_t>& v) {
      return r && v && r->requested_bytes > 0 ? static_cast<double>(*v) / r->requested_bytes : kNaN;
    };
    o.reclaim_achieved_ratio.push_back(r ? ratio(r->achieved_bytes) : kNaN);
    o.reclaim_conservative_ratio.push_back(r ? ratio(r->achieved_conservative_bytes) : kNaN);
    for (int k = 0; k < 2; ++k) {
      const auto& l = c.latency[k];
      o.p99_flagged[k].push_back(l && l->p99_flagged());
      o.quantiles[k][0].push_back(l ? l->p50_us : kNaN);
      o.quantiles[k][1].push_back(l ? l->p95_us : kNaN);
      o.quantiles[k][2].push_back(l ? l->p99_us : kNaN);
    }
  }
  return o;
}

nlohmann::json case_columns_json(const CaseColumns& c) {
  nlohmann::json j = {{"case_id", c.case_id},
                      {"vm", c.vm},
                      {"regime", c.regime},
                      {"configuration", c.configuration},
                      {"triplet_id", c.triplet_id},
                      {"accelerator", c.accelerator},
                      {"usable", c.usable},
                      {"status", c.status},
                      {"lost", c.lost},
                      {"trigger_delay_s", numbers(c.trigger_delay_s)},
                      {"reclaim_duration_ms", numbers(c.reclaim_duration_ms)},
                      {"reclaim_achieved_ratio", numbers(c.reclaim_achieved_ratio)},
                      {"reclaim_conservative_ratio", numbers(c.reclaim_conservative_ratio)}};
  for (int k = 0; k < 2; ++k) {
    j[std::string(canary_name(static_cast<Canary>(k))) + "_p99_flagged"] = c.p99_flagged[k];
    for (int q = 0; q < 3; ++q) j[quantile_column(k, q)] = numbers(c.quantiles[k][q]);
  }
  return j;
}

}  // namespace analysis
