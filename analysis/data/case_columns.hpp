#pragma once
// The per-case columns the figures draw (analysis/report/figures.py `cases`), one entry per case of a
// CampaignData in its order: built once here for both ways the script gets them, the pybind11
// module's load_campaign (numpy arrays) and the JSON `harness analyze` hands to the script
// (figures_runner.hpp), so the two cannot drift apart.
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/data/campaign_data.hpp"

namespace analysis {

/// Columns of equal length (the number of cases). Doubles are NaN where not measured.
struct CaseColumns {
  std::vector<std::string> case_id, vm, regime, configuration, triplet_id, accelerator, status;
  std::vector<bool> usable, lost;                 ///< lost: the outcome was imputed (PROTOCOL.md)
  std::array<std::vector<bool>, 2> p99_flagged;   ///< per canary (compute, sqlite): censored or imputed p99
  /// quantiles[canary][q], q = 0, 1, 2: pressure-phase p50, p95, p99 response time, us.
  std::array<std::array<std::vector<double>, 3>, 2> quantiles;
  std::vector<double> trigger_delay_s;            ///< s from the pressure start to the trigger
  std::vector<double> reclaim_duration_ms;        ///< first memory.reclaim write, ms
  std::vector<double> reclaim_achieved_ratio;     ///< achieved / requested bytes of that write
  std::vector<double> reclaim_conservative_ratio; ///< conservative achieved / requested bytes
};

/// The columns of `data.cases`. Never throws beyond allocation.
CaseColumns case_columns(const CampaignData& data);

/// Column name of canary k (0 compute, 1 sqlite) and quantile q (0 p50, 1 p95, 2 p99), e.g.
/// "compute_p99_us": the key figures.py reads.
std::string quantile_column(int canary, int q);

/// The columns as one JSON object of arrays keyed like the module's `cases` dict
/// (quantile_column, "<canary>_p99_flagged", ...); NaN is written as null.
nlohmann::json case_columns_json(const CaseColumns& c);

}  // namespace analysis
