// Confirmatory report: its parts in order (see analysis_report.hpp).
#include "analysis/report/analysis_report.hpp"

#include "analysis/data/overrides.hpp"
#include "analysis/report/design_coverage.hpp"
#include "analysis/report/report_json.hpp"
#include "analysis/report/report_verdict.hpp"
#include "analysis/report/report_warnings.hpp"
#include "analysis/tables/arm_effects.hpp"
#include "analysis/tables/case_medians.hpp"
#include "analysis/tables/outcome_tables.hpp"
#include "analysis/tables/sensitivity.hpp"
#include "analysis/tables/table1_settings.hpp"
#include "analysis/tables/table2_regimes.hpp"
#include "analysis/tables/table4_primary.hpp"
#include "analysis/tables/treatment_actions.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace analysis {
namespace {

// Every completed and lost case of the campaign (a triplet_id: not a pilot case), complete
// triplet or not: the population of the secondary tables (study: "the 60 cases in each
// configuration").
std::vector<const CaseSummary*> campaign_cases(const CampaignData& data) {
  std::vector<const CaseSummary*> v;
  for (const auto& c : data.cases)
    if (!c.triplet_id.empty()) v.push_back(&c);
  return v;
}

/// The report's tables, in order.
void report_tables(const CampaignData& data, const TripletSet& ts, const PrimaryResult& pr,
                   const std::vector<Sensitivity>& sens, Report& r) {
  const auto cases = triplet_cases(ts);
  r.tables.push_back(table1(data, cases, ts, pr.m));
  r.tables.push_back(table2(ts));
  r.tables.push_back(table4(pr, sens));
  r.tables.push_back(design_table(pr, ts));
  r.tables.push_back(absdiff(pr));
  const auto all = campaign_cases(data);
  r.tables.push_back(table5(all, ts.arms, ts.unit));
  r.tables.push_back(table5_usage(all, ts.arms));
  r.tables.push_back(table6(all, ts.arms));
  r.tables.push_back(mechanism(all, ts));
  r.tables.push_back(reclaim_execution_table(cases, ts.arms));
  r.tables.push_back(outcome_counts_table(data, ts));
  r.tables.push_back(attempts_table(data));
  r.tables.push_back(reclassifications_table(data));
  r.tables.push_back(measurement_quality_table(cases, ts.arms));
}

}  // namespace

Report build_analysis_report(const CampaignData& data, const TripletSet& ts, const PrimaryResult& pr) {
  Report r;
  r.title = report_title(data);
  record_warnings(data, ts, r);
  // Sensitivity analyses of Table 4 (never in the verdict): same estimator, B and seed.
  const PrimaryOptions sopt{{pr.replicates, pr.seed, 0}, pr.alpha, pr.m};
  std::vector<Sensitivity> sens;
  if (auto x = complete_case_sensitivity(ts, sopt)) sens.push_back(std::move(*x));
  const auto overridden = overridden_cases(data);
  override_sensitivity(data, ts, sopt, overridden, sens, r);
  design_cautions(pr, ts, r);
  // What each arm's policy did: a treatment that did not act is said so at the top and on its
  // verdict line (treatment_actions.hpp).
  const auto actions = arm_actions(ts);
  const auto not_acted = not_acted_warnings(actions, ts);
  r.warnings.insert(r.warnings.begin(), not_acted.begin(), not_acted.end());
  verdict_summary(pr, not_acted_notes(actions), r);
  report_tables(data, ts, pr, sens, r);
  r.tables.push_back(treatment_actions_table(actions));
  // What each arm bought and cost (secondary, arm_effects.hpp): per arm, per declared comparison
  // (the same stratified bootstrap), per case.
  const auto pairs = secondary_intervals(ts, pr);
  r.tables.push_back(arm_effects_table(ts));
  r.tables.push_back(secondary_table(pairs, pr));
  r.tables.push_back(case_effects_table(ts));
  r.extra = report_extra(data, ts, pr, sens, overridden);
  r.extra["treatment_actions"] = treatment_actions_json(actions);
  r.extra["tradeoff"] = tradeoff_json(pairs, pr);
  return r;
}

Report analyze_campaign(const std::string& db_path, const PrimaryOptions& opt) {
  const CampaignData data = load_campaign(db_path);
  const TripletSet ts = build_triplets(data);
  if (ts.triplets.empty()) {
    std::string why = fmt::format("{}: no complete matched {} to analyse ({} completed case(s))", db_path, ts.unit,
                                  data.cases.size());
    for (const auto& w : ts.warnings) why += "\n  " + w;
    throw std::invalid_argument(why);
  }
  const PrimaryResult pr = run_primary(ts, opt);
  return build_analysis_report(data, ts, pr);
}

}  // namespace analysis
