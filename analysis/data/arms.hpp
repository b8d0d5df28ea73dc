#pragma once
// The campaign's arms and its declared family of comparisons, as the analysis reads them
// (docs/CAMPAIGN.md "arms" and "analysis.comparisons"):
//   - arms: the DB's `arms` table ordered by `position` (schema version 6); a DB without one, or
//     with an empty one (a version-5 file read read-only, a per-case bundle), = the study's arms
//     found in the cases and the schedule, plus the arms the declared comparisons name, in the
//     study's order (study_facts.hpp kStudyArms), then any other arm name sorted by name;
//   - comparisons: the stored plan JSON's (campaign_meta.schedule_json) `analysis.comparisons`,
//     else the campaign YAML's, else the study's four. Spellings: "<canary>:<comparator>" (the
//     legacy spelling: treatment bounded-reclaim), "<canary>:<treatment>/<comparator>", or an
//     object {canary, treatment, comparator}. The ratio is treatment / comparator.
#include "analysis/data/case_summary.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/error/expected.hpp"

namespace results {
class Db;
}

namespace analysis {

/// One arm of the campaign. policy / params_json / sha256 are empty when the DB does not record
/// them (no `arms` table, or an empty one).
struct Arm {
  std::string name, policy, params_json, sha256;
};

/// "policy P, params J, sha256 H": an arm as the `arms` table records it (Table 1's arm rows,
/// the settings `harness compare` lines up).
std::string arm_record_text(const Arm& a);

/// One declared comparison: p99 ratio treatment / comparator of one canary.
struct ComparisonDef {
  Canary canary = Canary::Compute;
  std::string treatment, comparator;
  std::string label;  ///< comparison_label: "compute: bounded-reclaim / static-zram", "compute: senpai / static-zram"
};

/// Position of `name` in the study's arms (kStudyArms), -1 when it is not a study arm name.
int study_arm_position(std::string_view name);
/// The study's name of its arm at `position` (kStudyArms).
const char* study_arm_name(int position);
/// "<canary>: <treatment> / <comparator>", the arm names as declared (the study's arms too:
/// "compute: bounded-reclaim / static-zram"; ours: one spelling for every arm).
std::string comparison_label(Canary canary, const std::string& treatment, const std::string& comparator);

/// The word for one matched block in user-visible text: "triplet" (the study's word) for design.kind
/// matched-triplets, and when the design is not recorded for three arms; "block" otherwise
/// (matched-blocks, or k != 3 arms). Identifiers (triplet_id, CSV column names) keep "triplet".
std::string block_word(const std::optional<std::string>& design_kind, std::size_t arms);

/// The study's four comparisons in the study's Table 4 order: bounded reclaim versus static zram
/// and versus delayed activation, compute then sqlite.
const std::vector<ComparisonDef>& study_comparisons();
/// True when `family` is the study's four (in any order).
bool is_study_family(const std::vector<ComparisonDef>& family);
/// "the declared family of m comparisons (label; label; ...)".
std::string family_text(const std::vector<ComparisonDef>& family);

/// Parses one comparison spelling (string or object, see the file comment), or the Problem
/// when it is not one.
harness::Expected<ComparisonDef> parse_comparison(const nlohmann::json& v);

/// The declared family and where it came from.
struct DeclaredComparisons {
  std::vector<ComparisonDef> comparisons;
  std::string source;  ///< "plan JSON analysis.comparisons" | "campaign YAML analysis.comparisons" | "the study's four (none declared)"
  bool declared = false;
};
/// Reads the family from campaign_meta (schedule_json, else campaign_yaml); the study's four when
/// neither declares one. An unreadable entry is a warning (appended) and is left out; a declared
/// list with no readable entry falls back to the study's four (warned).
DeclaredComparisons declared_comparisons(const std::map<std::string, std::string>& meta,
                                         std::vector<std::string>& warnings);

/// The arms as documented in the file comment. `configurations`: the configuration of every case
/// and schedule row; `family`: the declared comparisons. `recorded` is set when the `arms` table
/// had rows. Errors: results::DbError.
std::vector<Arm> load_arms(results::Db& db, const std::vector<std::string>& configurations,
                           const std::vector<ComparisonDef>& family, bool& recorded);

/// The arm names without a table: the study's arms among `configurations` and the family, in
/// the study's order, then the other names sorted.
std::vector<std::string> default_arm_names(const std::vector<std::string>& configurations,
                                           const std::vector<ComparisonDef>& family);

}  // namespace analysis
