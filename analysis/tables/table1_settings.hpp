#pragma once
// Table 1 of the report: the settings and environment held constant across the analysed cases
// (spec fields with one value, what ran, what the VMs recorded) and the analysis' own rules where
// the study is silent (analysis/README.md).
#include "analysis/data/campaign_data.hpp"
#include "analysis/data/triplets.hpp"
#include "analysis/tables/table.hpp"

#include <vector>

namespace analysis {

/// Table 1 (`table1_constants`, setting / value) over `cases` (the cases of Table 4's blocks):
/// the spec fields every case has with one value (sizes in MiB), each treatment's dose (MiB),
/// accelerators, guest kernels, the campaign's seed and plan hash, every arm's policy, params and
/// sha256 (or why not recorded), the family when not the study's, the environment rows
/// (environment_table.hpp; unreadable: a note), the analysis rules; `m`: the family's size.
Table table1(const CampaignData& data, const std::vector<const CaseSummary*>& cases, const TripletSet& ts, int m);

}  // namespace analysis
