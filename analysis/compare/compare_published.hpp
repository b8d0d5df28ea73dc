#pragma once
// `harness compare --published DB`: one campaign beside the study's published results, read
// from the campaign's analysis report (build_analysis_report), so it shows what `harness
// analyze` shows. It says, per primary comparison, whether the study's finding is reproduced,
// whether the all-four rule gives the study's verdict, where the campaign's setting differs from
// the study's, and checks the study's statements about Tables 5 and 6 (the study text gives no
// numbers for those two tables, only statements; study_facts.hpp holds the numbers it gives).
//
// Rules (ours; analysis/README.md "Comparing with the study"):
// - A comparison's finding is where its interval lies: wholly below 1 (favours bounded reclaim),
//   containing 1 (no clear difference) or wholly above 1 (harm). The study's finding is
//   reproduced when this campaign's interval lies on the same side, at the study's level.
// - The study's verdict is the predefined rule (verdict.hpp decide) applied to its published
//   Table 4: no general benefit (sqlite / static contains 1), no harm.
// - A campaign whose verdict is not assessable (every stratum one triplet: zero-width
//   intervals) reproduces nothing and contradicts nothing: every judgement says "not
//   assessable", and the first warning says why.
#include "analysis/tables/table.hpp"

#include <string>

namespace analysis {

/// The comparison report. `ours` must hold the tables table1_constants, table4_primary,
/// table5_wake_service, table6_regime_medians and mechanism, and extra {verdict, level,
/// stratum_sizes, strata}; `label` names the campaign (its DB path). Tables: published_setting,
/// published_table4, published_rule, published_table5, table5_wake_service (this campaign's),
/// published_table6, table6_regime_medians (this campaign's), compare_mechanism, published_stall
/// (the study's PSI stall medians, owner not stated, beside this campaign's bg, fg and system
/// medians per study arm and PSI state), published_arms. Columns name
/// their side ("study ...", "this ..."). extra: {assessable, reproduced: [{comparison,
/// study_finding, this_finding, reproduced (bool or null)}], rule_same_verdict (bool or null),
/// setting_differences: [setting]}. Its Markdown is kept within kTerminalWidth (report_table.hpp).
/// Errors: std::invalid_argument naming a missing table or column.
Report compare_with_study(const Report& ours, const std::string& label);

}  // namespace analysis
