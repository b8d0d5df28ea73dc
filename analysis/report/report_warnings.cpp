// The report's warnings about what ran (see report_warnings.hpp).
#include "analysis/report/report_warnings.hpp"

#include "analysis/tables/environment_table.hpp"
#include "analysis/tables/outcome_tables.hpp"

#include <fmt/format.h>

namespace analysis {
namespace {

using nlohmann::json;

}  // namespace

std::string pipeline_test_dose_warning(const std::map<std::string, std::string>& meta) {
  const auto it = meta.find("schedule_json");
  if (it == meta.end()) return "";
  const json plan = json::parse(it->second, nullptr, false);
  if (!plan.is_object() || !plan.contains("dose_from_pilot")) return "";
  const json& p = plan["dose_from_pilot"];
  if (!p.is_object() || !p.contains("pipeline_test")) return "";
  const double mib = p.value("dose_bytes", 0.0) / (1024.0 * 1024.0);
  const json acc = p["pipeline_test"].value("pilot_accelerators", json::object());
  return fmt::format(
      "PIPELINE TEST: the bounded-reclaim dose ({:.0f} MiB) was chosen by the pilot rule from a pilot DB whose cases ran "
      "under {} and was planned with `harness plan --pipeline-test-dose`: it tests the pipeline; it is not a "
      "preregistered dose, and nothing here is evidence about the study's dose.",
      mib, acc.dump());
}

int tcg_case_count(const CampaignData& data) {
  int tcg = 0;
  for (const auto& c : data.cases)
    if (c.accelerator == "tcg") ++tcg;
  return tcg;
}

/// Lost cases (lost after the pressure phase started).
int lost_case_count(const CampaignData& data) {
  int lost = 0;
  for (const auto& c : data.cases) lost += c.lost();
  return lost;
}

void record_warnings(const CampaignData& data, const TripletSet& ts, Report& r) {
  if (const int tcg = tcg_case_count(data); tcg > 0)
    r.warnings.push_back(fmt::format(
        "{} case(s) ran under TCG (software emulation, no KVM): absolute timings are inflated under TCG; no timing "
        "claim should be made from them.", tcg));
  try {
    if (const auto w = overcommit_warning(data.db_path); !w.empty()) r.warnings.push_back(w);
  } catch (const std::exception&) {
    // advisory only: the tables above read the same DB, so a read error here loses nothing
    // they show; older DBs without the column are handled inside
  }
  if (const auto w = pipeline_test_dose_warning(data.meta); !w.empty()) r.warnings.push_back(w);
  if (!data.infra_failed.empty()) {
    std::string s = fmt::format("{} case(s) are infra_failed (the latest attempt failed before the pressure phase) and "
                                "not analysed:", data.infra_failed.size());
    for (const auto& id : data.infra_failed) s += " " + id;
    r.warnings.push_back(s);
  }
  if (!data.missing.empty()) {
    // An unfinished campaign (or one whose runs were lost): said first, with what it does to
    // the tables, which use two sets of cases until every block is complete.
    const std::size_t recorded = data.cases.size() + data.infra_failed.size();
    r.warnings.push_back(fmt::format(
        "CAMPAIGN NOT COMPLETE: {} of {} scheduled case(s) have a record ({} have none; `harness run` resumes it). "
        "Table 4, the verdict and the reclaim-execution and measurement tables use the {} complete {}(s) only; "
        "Tables 5, 5b, 6 and the mechanism table use every completed case, so until the campaign ends their arms "
        "may cover different regimes.",
        recorded, recorded + data.missing.size(), data.missing.size(), ts.triplets.size(), ts.unit));
    std::string s = fmt::format("{} scheduled case(s) have no case record (missing):", data.missing.size());
    for (const auto& id : data.missing) s += " " + id;
    r.warnings.push_back(s);
  }
  for (const auto& w : data.warnings) r.warnings.push_back(w);
  for (const auto& w : ts.warnings) r.warnings.push_back(w);
  if (const int lost = lost_case_count(data); lost > 0)
    r.warnings.push_back(fmt::format(
        "{} lost case(s) (lost after the pressure phase started): kept in their {}s with the worst observed p99 "
        "per canary imputed (flagged; docs/PROTOCOL.md assumption)", lost, ts.unit));
  for (const auto& w : measurement_warnings(triplet_cases(ts))) r.warnings.push_back(w);
}

}  // namespace analysis
