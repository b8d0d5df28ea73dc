// report.json's extra (see report_json.hpp).
#include "analysis/report/report_json.hpp"

#include "analysis/report/report_verdict.hpp"
#include "analysis/report/report_warnings.hpp"

namespace analysis {
namespace {

using nlohmann::json;

/// extra's first members: the DB, the estimates, the verdict and the design.
json primary_extra(const CampaignData& data, const TripletSet& ts, const PrimaryResult& pr) {
  json comps = json::array();
  for (const auto& c : pr.comparisons)
    comps.push_back({{"label", c.label}, {"estimate", c.estimate}, {"lower", c.lower}, {"upper", c.upper},
                     {"corrected_lower", c.corrected_lower}, {"corrected_upper", c.corrected_upper},
                     {"percent_change", c.percent_change}, {"triplets", c.triplets}});
  return {{"db", data.db_path}, {"level", pr.level}, {"replicates", pr.replicates}, {"seed", pr.seed},
          {"comparisons", comps}, {"verdict", verdict_json(pr)},
          {"expected_coverage", pr.expected_coverage}, {"expected_coverage_corrected", pr.expected_coverage_corrected},
          {"stratum_sizes", pr.stratum_sizes}, {"strata", ts.strata}, {"tcg_cases", tcg_case_count(data)},
          {"lost_cases", lost_case_count(data)}, {"excluded_triplets", ts.excluded}};
}

/// extra.sensitivity: each sensitivity analysis's estimates (or why there are none).
json sensitivity_json(const std::vector<Sensitivity>& sens) {
  json sj = json::array();
  for (const auto& x : sens) {
    json c = json::array();
    if (x.pr)
      for (const auto& k : x.pr->comparisons)
        c.push_back({{"label", k.label}, {"estimate", k.estimate}, {"lower", k.lower}, {"upper", k.upper},
                     {"triplets", k.triplets}});
    sj.push_back({{"analysis", x.name}, {"comparisons", c}, {"why_none", x.why_none}});
  }
  return sj;
}

/// extra.arms: policy, params and sha256 of each arm when the DB records them.
json arms_json(const CampaignData& data) {
  json arms = json::array();
  for (const auto& a : data.arms)
    arms.push_back({{"name", a.name},
                    {"policy", data.arms_recorded ? json(a.policy) : json(nullptr)},
                    {"params", data.arms_recorded ? json::parse(a.params_json, nullptr, false) : json(nullptr)},
                    {"sha256", data.arms_recorded ? json(a.sha256) : json(nullptr)}});
  return arms;
}

/// extra.family: the comparisons judged.
json family_json(const CampaignData& data, const PrimaryResult& pr) {
  json fam = json::array();
  for (const auto& c : pr.family)
    fam.push_back({{"label", c.label}, {"canary", canary_name(c.canary)}, {"treatment", c.treatment},
                   {"comparator", c.comparator}});
  return {{"m", pr.m}, {"study_family", pr.study_family}, {"comparisons", fam}, {"source", data.comparisons_source}};
}

/// extra.overridden_cases.
json overridden_json(const std::vector<OverriddenCase>& overridden) {
  json ov = json::array();
  for (const auto& o : overridden)
    ov.push_back({{"case_id", o.case_id}, {"original_status", o.original_status}, {"original", o.original},
                  {"status_now", o.status_now}, {"operator", o.operator_name}, {"reason", o.reason}});
  return ov;
}

}  // namespace

json report_extra(const CampaignData& data, const TripletSet& ts, const PrimaryResult& pr,
                  const std::vector<Sensitivity>& sens, const std::vector<OverriddenCase>& overridden) {
  json extra = primary_extra(data, ts, pr);
  extra["sensitivity"] = sensitivity_json(sens);
  extra["arms"] = arms_json(data);
  extra["unit"] = ts.unit;  // the word for a block in this report's text
  extra["arms_source"] = data.arms_recorded ? "arms table"
                                            : "not recorded (no arms table, e.g. a version-5 DB read read-only): "
                                              "the study's arms found in the cases, in the study's order";
  extra["family"] = family_json(data, pr);
  extra["overridden_cases"] = overridden_json(overridden);
  extra["coverage"] = {{"per_comparison", pr.coverage.per_comparison}, {"joint", pr.coverage.joint},
                       {"corrected_per_comparison", pr.coverage.corrected_per_comparison},
                       {"corrected_joint", pr.coverage.corrected_joint}, {"df", pr.coverage.df}};
  json inc = json::array();
  for (const auto& i : ts.incomplete) inc.push_back({{"triplet", i.id}, {"never_run", i.never_run}});
  extra["incomplete_triplets"] = inc;
  return extra;
}

}  // namespace analysis
