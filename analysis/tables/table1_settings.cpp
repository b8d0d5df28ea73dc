// Table 1: settings and environment held constant (see table1_settings.hpp).
#include "analysis/tables/table1_settings.hpp"

#include "analysis/data/arms.hpp"
#include "analysis/data/campaign_settings.hpp"
#include "analysis/tables/environment_table.hpp"
#include "analysis/data/pilot_reading.hpp"
#include "analysis/data/study_facts.hpp"
#include "harness/text/join.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace analysis {
namespace {

using nlohmann::json;

// Spec fields as (dotted key, text); sizes in bytes are shown in MiB ("cgroups.bg_memory_max (MiB)").
void flatten(const json& j, const std::string& prefix, std::map<std::string, std::string>& out) {
  static const std::string kBytes = "_bytes";
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else if ((j.is_number() || j.is_null()) && prefix.size() > kBytes.size() &&
             prefix.compare(prefix.size() - kBytes.size(), kBytes.size(), kBytes) == 0) {
    out[prefix.substr(0, prefix.size() - kBytes.size()) + " (MiB)"] =
        j.is_null() ? std::string("none (no limit)") : fmt::format("{:g}", j.get<double>() / kMiB);
  } else if (j.is_null()) {
    out[prefix] = "none";
  } else {
    out[prefix] = j.is_string() ? j.get<std::string>() : j.dump();
  }
}

// "four" for the study's m, else the number.
std::string count_words(int m) { return m == 4 ? std::string("four") : std::to_string(m); }

/// Table 1's rows of the spec fields every analysed case has with one value; returns the fields
/// that vary (per-case fields, as case_id or regime, are neither).
std::vector<std::string> constant_spec_rows(const std::vector<const CaseSummary*>& cases, Table& t) {
  static const std::set<std::string> per_case{"case_id", "vm", "regime", "repeat", "triplet_id", "configuration",
                                              "dose (MiB)", "pressure.rate_mib_s", "pressure.contents"};
  std::map<std::string, std::set<std::string>> values;
  std::map<std::string, std::size_t> present;
  for (const auto* c : cases) {
    std::map<std::string, std::string> f;
    flatten(c->spec, "", f);
    for (auto& [k, v] : f) {
      values[k].insert(v);
      ++present[k];
    }
  }
  std::vector<std::string> varying;
  for (auto& [k, vs] : values) {
    if (per_case.count(k)) continue;
    if (vs.size() == 1 && present[k] == cases.size()) t.add({k, *vs.begin()});
    else varying.push_back(k);
  }
  return varying;
}

/// Table 1's rows of what ran: each treatment's dose, accelerators, kernels, the campaign's
/// seed and plan hash, the arms and the family when not the study's.
void run_rows(const CampaignData& data, const std::vector<const CaseSummary*>& cases, const TripletSet& ts, Table& t) {
  std::set<std::string> accel, kernels;
  std::map<std::string, std::set<std::string>> doses;  // arm -> its doses (cases.dose_bytes)
  for (const auto* c : cases) {
    if (c->dose_bytes) doses[c->configuration].insert(fmt::format("{:g}", *c->dose_bytes / kMiB));
    accel.insert(c->accelerator);
    kernels.insert(c->kernel_release);
  }
  using harness::text::join;
  for (const auto& arm : ts.arms)
    if (doses.count(arm) || is_family_treatment(ts, arm))
      t.add({arm + " dose, memory.reclaim write (MiB)",
             doses.count(arm) ? join(doses[arm]) : std::string("no single dose: its policy's parameters (row arm " + arm + ")")});
  t.add({"accelerator", join(accel)});
  t.add({"guest kernel", join(kernels)});
  for (const char* k : {"seed", "schedule_sha256"})
    if (data.meta.count(k)) t.add({std::string("campaign ") + k, data.meta.at(k)});
  // Every arm's policy, parameters and hash (the DB's `arms` table, schema version 6).
  if (data.arms_recorded) {
    for (const auto& a : data.arms)
      t.add({"arm " + a.name, arm_record_text(a)});
  } else if (!is_study_family(ts.family()) ||
             std::any_of(ts.arms.begin(), ts.arms.end(), [](const std::string& a) { return study_arm_position(a) < 0; })) {
    const std::string names = harness::text::join(ts.arms);
    t.add({"arms", names + " (policy, params and sha256 not recorded: the DB has no arms table, e.g. a version-5 "
                           "file read read-only)"});
  }
  if (!is_study_family(ts.family()))
    t.add({"comparisons (" + data.comparisons_source + ")", family_text(ts.family())});
}

/// Table 1's rows of the analysis' own choices where the study is silent (campaigns/README.md
/// "Assumptions"); `m`: the family's size.
void analysis_rule_rows(const CampaignData& data, const TripletSet& ts, int m, Table& t) {
  PilotReading reading;  // the campaign's `eligibility` reading of the pilot rule (pilot_reading.hpp)
  {
    const auto s = read_campaign_settings(data.meta);
    reading.restoration = s.restoration.value_or(reading.restoration);
    reading.eagain = s.eagain.value_or(reading.eagain);
  }
  for (const auto& [k, v] : std::vector<std::pair<const char*, std::string>>{
           {"pilot rule reading", reading.text() + " (campaign YAML eligibility.restoration, eligibility.eagain; "
                                  "it chose the dose when design.dose_mib is from_pilot)"},
           {"lost case in Table 4", "p99 imputed as the worst observed of its canary (docs/PROTOCOL.md)"},
           {"Table 4 sensitivity rows", "complete cases (" + ts.unit + "s with a lost member left out); original "
                                        "outcomes of overridden cases reinstated (p99s only)"},
           {"lost case in Tables 5, 5b, 6, mechanism", "in the p99 medians with its imputed p99, in no other column"},
           {"attempts", "finished runs (kind run or adopted), as harness status counts them"},
           {"expected coverage", "analytic: equal within-stratum variances, normal errors, t df and kurtosis terms; "
                                 "joint = product of the " + count_words(m)}})
    t.add({std::string("analysis rule (ours): ") + k, v});
}

}  // namespace

Table table1(const CampaignData& data, const std::vector<const CaseSummary*>& cases, const TripletSet& ts, int m) {
  Table t{"table1_constants", "Table 1. Settings and environment held constant across the analysed cases",
          {{"setting", 0}, {"value", 0}}, {}, {}};
  const std::vector<std::string> varying = constant_spec_rows(cases, t);
  run_rows(data, cases, ts, t);
  // What qualification and the executor recorded on the VMs (cases.environment_json, ...).
  std::vector<std::string> ids;
  for (const auto* c : cases) ids.push_back(c->case_id);
  try {
    for (auto& [k, v] : environment_rows(data.db_path, ids)) t.add({"environment: " + k, v});
  } catch (const std::exception& e) {
    t.notes.push_back(std::string("Environment rows not available: ") + e.what());
  }
  analysis_rule_rows(data, ts, m, t);
  if (!varying.empty()) {
    std::string s = "Settings that vary between cases (not constant, so not listed): ";
    s += harness::text::join(varying);
    t.notes.push_back(s + ".");
  }
  t.notes.push_back("Per-case fields (vm, regime, repeat, configuration, dose, rate, contents) are in Table 2 and the case records. "
                    "Sizes are in MiB (2^20 bytes) unless a row names another unit. Environment rows: "
                    "cases.environment_json and cases.qualification_json (recorded at case start) and the SQLite "
                    "canary's report (artifact canary-sqlite.json); \"not recorded\" = no analysed case has the field.");
  return t;
}

}  // namespace analysis
