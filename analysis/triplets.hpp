#pragma once
// Matched triplets and strata (study: one case per configuration under the same VM, pressure
// regime and repeat identifier; stratum = (vm, regime); DESIGN.md "Analysis").
#include "analysis/campaign_data.hpp"

#include <Eigen/Dense>

#include <array>
#include <string>
#include <vector>

namespace analysis {

/// One complete matched triplet: a usable case for every configuration (indexed by Config).
struct Triplet {
  std::string id, vm, regime;
  int stratum = 0;                               ///< index into TripletSet::strata
  std::array<const CaseSummary*, 3> cases{};     ///< [Static, Delayed, Reclaim]
};

/// The triplets entering the primary analysis, ordered by stratum then triplet id.
struct TripletSet {
  std::vector<Triplet> triplets;
  std::vector<std::string> strata;               ///< "vm/regime", sorted
  std::vector<std::string> warnings;             ///< dropped triplets and why; 1-triplet strata
};

/// Groups usable completed cases with a triplet_id into triplets. A triplet is dropped with a
/// warning naming it when a configuration is missing, duplicated or unusable, its cases disagree on
/// vm/regime, or a canary p99 is absent, <= 0 or infinite (log ratio undefined). `data` must outlive
/// the result (pointers into data.cases).
TripletSet build_triplets(const CampaignData& data);

/// The four primary comparisons (study Table 4 order): bounded reclaim versus comparator per canary.
struct ComparisonDef {
  Canary canary;
  Config comparator;
  const char* label;  ///< e.g. "compute: reclaim / static"
};
const std::array<ComparisonDef, 4>& primary_comparisons();

/// T x 4 matrix of d = ln(p99_reclaim / p99_comparator), columns in primary_comparisons() order.
Eigen::MatrixXd log_ratio_matrix(const TripletSet& ts);

/// T x 8 matrix of absolute differences in us: for each comparison j, column 2j = p95 difference
/// (reclaim - comparator), column 2j+1 = p99 difference.
Eigen::MatrixXd abs_diff_matrix(const TripletSet& ts);

/// Stratum label of each triplet (T entries).
std::vector<int> stratum_labels(const TripletSet& ts);

}  // namespace analysis
