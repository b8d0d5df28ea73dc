#pragma once
// `harness compare`: N campaigns' primary comparisons (Table 4), mechanism medians and arms side
// by side with their differences from the first (compare_campaigns.hpp adds the A/B metrics and
// the settings that differ), or one campaign beside the study's published values
// (`--published`: analysis/data/study_facts.hpp). Each side is read from an analysis report
// (build_analysis_report), so compare shows exactly what `harness analyze` reports.
#include "analysis/tables/table.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// One primary comparison of one side (ratio bounded reclaim / comparator; interval at the
/// side's simultaneous level).
struct SideRatio {
  std::string label;        ///< e.g. "compute: bounded-reclaim / static-zram" (ComparisonDef::label)
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

/// The name of side i in column headers: "A", "B", ... "Z" (the first side, A, is the
/// reference). Errors: std::invalid_argument for i >= 26.
std::string side_name(std::size_t i);

/// Tables of N sides side by side; sides[0] is the reference every other side is set against.
/// - "compare_table4": one row per comparison any side has (the reference's first, then the
///   others in order of first appearance). Per side X: blocks, ratio, lower, upper (blank when
///   X lacks the comparison); then per later side X: X / A, X - A, whether the two intervals
///   overlap (or "<side> lacks it"), whether A's estimate lies in X's interval and X's in A's.
/// - "compare_mechanism": per arm and quantity, each side's median, then per later side X - A
///   and X / A - 1 in %; a quantity no side has is left out, one a side lacks is blank.
/// - "compare_arms": every arm of any side (the reference's order, then the others): per side
///   "yes" or its lacks_arm text, then per side the arm's definition.
/// Title: "Reclaim ablation: comparison of N sides, A the reference"; the first summary
/// paragraph names them ("Sides: A = <label>; B = <label>; ..."). A TCG side is warned. The
/// tables' columns are grouped by side (Column::side), and the Markdown kept within
/// kTerminalWidth (report_table.hpp render_markdown).
/// Errors: std::invalid_argument when there is no side or names are not one per side.
Report compare_sides(const std::vector<CompareSide>& sides, const std::vector<std::string>& names);

/// The two-side form: compare_sides({a, b}, {names.a, names.b}).
Report compare_sides(const CompareSide& a, const CompareSide& b, const SideNames& names = {});

/// The table `id` of report `r`. Errors: std::invalid_argument naming the report and table.
const Table& find_report_table(const Report& r, const std::string& id);

/// The number in table cell `c`, or nullopt when the cell is not a number (null, text).
std::optional<double> cell_number(const nlohmann::json& c);

}  // namespace analysis
