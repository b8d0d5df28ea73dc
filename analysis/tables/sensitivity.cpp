// Table 4's sensitivity analyses (see sensitivity.hpp).
#include "analysis/tables/sensitivity.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace analysis {

std::optional<Sensitivity> complete_case_sensitivity(const TripletSet& ts, const PrimaryOptions& sopt) {
  int with_lost = 0;
  for (const auto& t : ts.triplets)
    with_lost += std::any_of(t.cases.begin(), t.cases.end(), [](const CaseSummary* c) { return c->lost(); });
  if (with_lost == 0) return std::nullopt;
  Sensitivity x;
  x.name = fmt::format("complete cases ({} {}(s) with a lost member left out)", with_lost, ts.unit);
  const TripletSet cc = without_lost_cases(ts);
  if (cc.triplets.empty()) x.why_none = "every " + ts.unit + " has a lost member";
  else x.pr = run_primary(cc, sopt);
  return x;
}

namespace {

/// The warning of one case whose outcome the operator overrode; `original`: the campaign with
/// the original outcomes reinstated (what it imputes for a lost one).
std::string override_warning(const OverriddenCase& o, const CampaignData& original) {
  std::string p99 = o.original_p99_text();
  if (o.original_status == "lost") {  // imputed: what the reinstated campaign imputes for it
    p99.clear();
    for (const auto& c : original.cases)
      if (c.case_id == o.case_id)
        for (Canary k : {Canary::Compute, Canary::Sqlite})
          if (const auto& l = c.latency[static_cast<int>(k)])
            p99 += fmt::format("{}{} {:.3f} ms", p99.empty() ? "" : ", ", canary_name(k), l->p99_us / 1000.0);
    p99 = "imputed (worst observed): " + (p99.empty() ? std::string("n/a") : p99);
  }
  return fmt::format(
      "case {} ({}): its {} outcome was overridden by the operator (harness mark-infra --override-outcome, "
      "attempt {}, by {}: {}); original p99: {}; analysed now as {}. Table 4 also shows the estimates with the "
      "original outcomes reinstated (sensitivity; study: every case retains its original outcome).",
      o.case_id, o.configuration, o.original_status, o.attempt, o.operator_name.empty() ? "?" : o.operator_name,
      o.reason.empty() ? "(no reason recorded)" : o.reason, p99,
      o.status_now.empty() ? std::string("no case record") : o.status_now);
}

}  // namespace

void override_sensitivity(const CampaignData& data, const TripletSet& ts, const PrimaryOptions& sopt,
                          const std::vector<OverriddenCase>& overridden, std::vector<Sensitivity>& sens, Report& r) {
  if (overridden.empty()) return;
  std::vector<std::string> notes;
  const CampaignData original = with_original_outcomes(data, overridden, notes);
  const TripletSet ots = build_triplets(original);
  Sensitivity x;
  x.name = fmt::format("original outcomes reinstated ({} overridden case(s))", overridden.size());
  if (ots.triplets.empty()) x.why_none = "no complete " + ts.unit + " with the original outcomes";
  else x.pr = run_primary(ots, sopt);
  for (const auto& n : notes) x.note += (x.note.empty() ? "Original outcomes reinstated: " : " ") + n + ".";
  sens.push_back(std::move(x));
  for (const auto& o : overridden) r.warnings.push_back(override_warning(o, original));
}

}  // namespace analysis
