#pragma once
// `harness compare`: two campaigns' primary comparisons (Table 4) and mechanism medians side by
// side with their differences, or one campaign beside the study's published values
// (`--published`: analysis/study_medians.hpp). Each side is read from an analysis report
// (build_analysis_report), so compare shows exactly what `harness analyze` reports.
#include "analysis/report_table.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// One primary comparison of one side (ratio bounded reclaim / comparator; interval at the
/// side's simultaneous level).
struct SideRatio {
  std::string label;        ///< e.g. "compute: reclaim / static" (ComparisonDef::label)
  double estimate = 1, lower = 1, upper = 1;
  std::optional<int> triplets;
};

/// What compare needs of one campaign (or of the study).
struct CompareSide {
  std::string label;                  ///< DB path, or "study (published)"
  std::string accelerators;           ///< e.g. "tcg"; empty = not known
  std::vector<SideRatio> table4;      ///< in the side's family order
  std::vector<std::string> arms;      ///< the side's arms, in its order (the report's arms, else its mechanism table's)
  /// arm -> its definition as the side records it ("policy P, params {...}"; "" = not recorded).
  std::map<std::string, std::string> arm_definitions;
  /// What the arms table says for an arm this side does not have ("not run"; the study: "not part
  /// of the study").
  std::string lacks_arm = "not run";
  std::string unit = "triplet";       ///< the side's word for a block (its Table 4 column header)
  /// configuration -> quantity (mechanism table column name, e.g. "swap_out_kib") -> median.
  std::map<std::string, std::map<std::string, std::optional<double>>> mechanism;
};

/// Reads a side from an analysis report: tables "table4_primary" and "mechanism" (by column
/// name), the arms and their definitions from extra.arms (build_analysis_report). Errors:
/// std::invalid_argument naming the missing table or column.
CompareSide side_from_report(const Report& r, const std::string& label);

/// The study's published Table 4 (kStudyTable4) and mechanism medians (kStudyMechanism; the
/// quantities the study reports: swap-out, refaults, bg PSI some/full stall).
CompareSide published_side();

/// Short names of the two sides in column headers (e.g. "study" and "this campaign"); the
/// CSV names use tidy_name of each ("a", "b" by default).
struct SideNames {
  std::string a = "A", b = "B";
};

/// Tables "compare_table4" (per comparison: both ratios and intervals, B / A, B - A, whether
/// the intervals overlap and whether each estimate lies in the other's interval) and
/// "compare_mechanism" (per configuration and quantity: A, B, B - A, B / A - 1 in %; a quantity
/// one side lacks shows n/a) and "compare_arms" (every arm of either side, A's order then B's
/// others: whether each side runs it, or the side's lacks_arm text, and each side's definition).
/// Title names both sides; headers use `names`.
Report compare_sides(const CompareSide& a, const CompareSide& b, const SideNames& names = {});

/// The table `id` of report `r`. Errors: std::invalid_argument naming the report and table.
const Table& find_report_table(const Report& r, const std::string& id);

/// Index of the column whose CSV name (column_name) is `name`. Errors: std::invalid_argument.
std::size_t column_index(const Table& t, const std::string& name);

/// The number in table cell `c`, or nullopt when the cell is not a number (null, text).
std::optional<double> cell_number(const nlohmann::json& c);

}  // namespace analysis
