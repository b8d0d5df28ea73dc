#pragma once
// The sensitivity analyses of Table 4 (ours; never in the verdict): the same estimator, B and seed
// on other data: the complete cases (every block with a lost member left out) and the original
// outcomes of overridden cases reinstated (docs/PROTOCOL.md; analysis/README.md).
#include "analysis/data/campaign_data.hpp"
#include "analysis/data/overrides.hpp"
#include "analysis/data/triplets.hpp"
#include "analysis/tables/table.hpp"
#include "analysis/tables/primary.hpp"

#include <optional>
#include <string>
#include <vector>

namespace analysis {

// A sensitivity analysis of Table 4: the same estimator and bootstrap on other data.
struct Sensitivity {
  std::string name;                 ///< the "analysis" column
  std::optional<PrimaryResult> pr;  ///< nullopt: nothing left to analyse (why_none)
  std::string why_none;
  std::string note;
};

/// The complete-case sensitivity analysis, when some block has a lost member (nullopt when none has).
std::optional<Sensitivity> complete_case_sensitivity(const TripletSet& ts, const PrimaryOptions& sopt);

/// Overridden outcomes: the sensitivity analysis with the original outcomes reinstated (into
/// `sens`) and one warning per overridden case, with its original p99s in ms (into `r`); nothing
/// when `overridden` is empty.
void override_sensitivity(const CampaignData& data, const TripletSet& ts, const PrimaryOptions& sopt,
                          const std::vector<OverriddenCase>& overridden, std::vector<Sensitivity>& sens, Report& r);

}  // namespace analysis
