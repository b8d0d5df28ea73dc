#pragma once
// Matched blocks and strata (study: one case per configuration under the same VM, pressure
// regime and repeat identifier, a "triplet"; with k arms a block of k cases, one per arm, the
// `triplet_id` column is the block id; stratum = (vm, regime); docs/PROTOCOL.md "Every case keeps
// its outcome": no block is dropped for its outcome). The names keep "triplet" (the study's k = 3).
#include "analysis/data/arms.hpp"
#include "analysis/data/campaign_data.hpp"

#include <Eigen/Dense>

#include <array>
#include <string>
#include <vector>

namespace analysis {

/// One complete matched block (a triplet for the study's three arms): a usable completed or lost
/// case for every arm, indexed by the arm's position in TripletSet::arms.
struct Triplet {
  std::string id, vm, regime;
  int stratum = 0;                               ///< index into TripletSet::strata
  std::vector<const CaseSummary*> cases;         ///< one per arm, in TripletSet::arms order
};
using Block = Triplet;

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
  std::vector<std::string> arms;                 ///< the campaign's arms, report order (CampaignData::arms)
  std::vector<ComparisonDef> comparisons;        ///< the declared family (CampaignData::comparisons)
  /// The word for one block in user-visible text (block_word of the campaign YAML's design.kind and
  /// the arms): "triplet" for the study's design, else "block".
  std::string unit = "triplet";
  /// `comparisons`, or the study's four when it is empty.
  const std::vector<ComparisonDef>& family() const;
  /// Position of arm `name` in `arms`, -1 when the campaign has no such arm.
  int arm_index(const std::string& name) const;
};

/// Groups completed and lost cases with a triplet_id (and the schedule's triplet rows) into
/// blocks of one case per arm (data.arms; when empty, default_arm_names of the cases and the
/// family; the family is data.comparisons, when empty the study's four). Outcomes never exclude a triplet: censored p99 (lower bound) and imputed p99 (lost
/// case) enter as they are. A triplet is incomplete when a configuration was never run; it is
/// excluded (named, with why) only for a recording error: two cases for one configuration, a case
/// marked unusable (campaign_data.hpp), cases disagreeing on vm/regime, or a p99 <= 0 or not
/// finite (log ratio undefined). `data` must outlive the result (pointers into data.cases).
TripletSet build_triplets(const CampaignData& data);

/// Complete-case subset (Table 4's sensitivity row; ours): the triplets of `ts` none of whose
/// members is lost (an imputed p99), strata renumbered over the ones that keep a triplet (a
/// stratum whose every triplet had a lost member drops out). Incomplete/excluded lists are kept.
TripletSet without_lost_cases(const TripletSet& ts);

/// T x m matrix of d = ln(p99_treatment / p99_comparator), one column per comparison of
/// ts.comparisons in that order (the study's: bounded reclaim / comparator). Errors:
/// std::invalid_argument when a comparison names an arm the campaign does not have.
Eigen::MatrixXd log_ratio_matrix(const TripletSet& ts);

/// T x 2m matrix of absolute differences in us: for each comparison j, column 2j = p95 difference
/// (treatment - comparator), column 2j+1 = p99 difference. Errors as log_ratio_matrix.
Eigen::MatrixXd abs_diff_matrix(const TripletSet& ts);

/// Stratum label of each triplet (T entries).
std::vector<int> stratum_labels(const TripletSet& ts);

/// Whether `arm` is a treatment of ts's family (ts.family(): the declared comparisons, else the
/// study's four).
bool is_family_treatment(const TripletSet& ts, const std::string& arm);

/// The cases of ts's complete blocks (Table 4's population), block by block, each block's in
/// ts.arms order; pointers into the CampaignData the blocks were built from.
std::vector<const CaseSummary*> triplet_cases(const TripletSet& ts);

}  // namespace analysis
