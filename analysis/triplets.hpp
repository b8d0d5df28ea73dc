#pragma once
// Matched triplets and strata (study: one case per configuration under the same VM, pressure
// regime and repeat identifier; stratum = (vm, regime); docs/PROTOCOL.md "Every case keeps its
// outcome": no triplet is dropped for its outcome).
#include "analysis/campaign_data.hpp"

#include <Eigen/Dense>

#include <array>
#include <string>
#include <vector>

namespace analysis {

/// One complete matched triplet: a usable completed or lost case for every configuration (indexed by Config).
struct Triplet {
  std::string id, vm, regime;
  int stratum = 0;                               ///< index into TripletSet::strata
  std::array<const CaseSummary*, 3> cases{};     ///< [Static, Delayed, Reclaim]
};

/// A triplet with a member that was never run (docs/PROTOCOL.md: pending, or infra_failed with
/// retries exhausted, or scheduled without any record): the only reason a triplet is incomplete.
struct IncompleteTriplet {
  std::string id, vm, regime;
  std::vector<std::string> never_run;            ///< "<configuration> (<case_id>: <state>)"
};

/// The triplets entering the primary analysis, ordered by stratum then triplet id.
struct TripletSet {
  std::vector<Triplet> triplets;
  std::vector<std::string> strata;               ///< "vm/regime", sorted
  std::vector<IncompleteTriplet> incomplete;     ///< a member never run (listed in the report)
  std::vector<std::string> excluded;             ///< triplets excluded for a recording error, with why
  std::vector<std::string> warnings;             ///< incomplete / excluded triplets; 1-triplet strata
};

/// Groups completed and lost cases with a triplet_id (and the schedule's triplet rows) into
/// triplets. Outcomes never exclude a triplet: censored p99 (lower bound) and imputed p99 (lost
/// case) enter as they are. A triplet is incomplete when a configuration was never run; it is
/// excluded (named, with why) only for a recording error: two cases for one configuration, a case
/// marked unusable (campaign_data.hpp), cases disagreeing on vm/regime, or a p99 <= 0 or not
/// finite (log ratio undefined). `data` must outlive the result (pointers into data.cases).
TripletSet build_triplets(const CampaignData& data);

/// Complete-case subset (Table 4's sensitivity row; ours): the triplets of `ts` none of whose
/// members is lost (an imputed p99), strata renumbered over the ones that keep a triplet (a
/// stratum whose every triplet had a lost member drops out). Incomplete/excluded lists are kept.
TripletSet without_lost_cases(const TripletSet& ts);

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
