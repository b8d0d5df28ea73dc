// Overridden outcomes (see overrides.hpp).
#include "analysis/data/overrides.hpp"

#include "analysis/data/case_outcome.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace analysis {

nlohmann::json original_outcome_record(results::Db& db, const std::string& case_id) {
  std::vector<std::string> warnings;
  const auto c = load_case(db, case_id, warnings);
  if (!c) return nullptr;
  const nlohmann::json identity = {{"vm", c->vm}, {"regime", c->regime}, {"repeat", c->repeat},
                                   {"triplet_id", c->triplet_id}, {"configuration", c->configuration}};
  if (c->lost()) return {{"status", "lost"}, {"case", identity}};
  nlohmann::json canaries = nlohmann::json::object();
  for (Canary k : {Canary::Compute, Canary::Sqlite}) {
    const auto& l = c->latency[static_cast<int>(k)];
    if (!l) continue;
    canaries[canary_name(k)] = {{"p50_us", l->p50_us}, {"p95_us", l->p95_us}, {"p99_us", l->p99_us},
                                {"requests", l->requests}, {"censored", l->censored}};
  }
  return {{"status", "completed"}, {"case", identity}, {"usable", c->usable},
          {"excluded_because", c->excluded_because}, {"canaries", canaries}};
}

std::string OverriddenCase::original_p99_text() const {
  if (!original.is_object() || !original.contains("canaries") || !original["canaries"].is_object())
    return "not recorded";
  std::string s;
  for (Canary k : {Canary::Compute, Canary::Sqlite}) {
    const auto v = json_number(original, {"canaries", canary_name(k), "p99_us"});
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", canary_name(k), v ? fmt::format("{:.3f} ms", *v / 1000.0) : "n/a");
  }
  return s;
}

std::vector<OverriddenCase> overridden_cases(const CampaignData& data) {
  std::map<std::string, OverriddenCase> first;
  for (const auto& a : data.attempts) {
    if (a.kind != "mark-infra" || first.count(a.case_id)) continue;
    const auto& d = a.detail;
    const std::string prev = d.is_object() && d.contains("previous_status") && d["previous_status"].is_string()
                                 ? d["previous_status"].get<std::string>()
                                 : "";
    if (prev != "completed" && prev != "lost") continue;
    OverriddenCase o;
    o.case_id = a.case_id;
    o.configuration = a.configuration;
    o.original_status = prev;
    o.attempt = a.attempt;
    o.reason = a.reason;
    if (d.contains("operator") && d["operator"].is_string()) o.operator_name = d["operator"];
    if (d.contains("original_outcome")) o.original = d["original_outcome"];
    first[a.case_id] = std::move(o);
  }
  std::vector<OverriddenCase> out;
  for (auto& [id, o] : first) {
    for (const auto& c : data.cases)
      if (c.case_id == id) o.status_now = c.status;
    if (o.status_now.empty() &&
        std::find(data.infra_failed.begin(), data.infra_failed.end(), id) != data.infra_failed.end())
      o.status_now = "infra_failed";
    out.push_back(std::move(o));
  }
  return out;
}

CampaignData with_original_outcomes(const CampaignData& data, const std::vector<OverriddenCase>& overridden,
                                    std::vector<std::string>& notes) {
  CampaignData out = data;
  for (const auto& o : overridden) {
    const bool lost = o.original_status == "lost";
    if (!lost && !(o.original.is_object() && o.original.contains("canaries"))) {
      notes.push_back(fmt::format("case {}: its original p99s were not recorded when it was overridden: it keeps its "
                                  "current outcome here", o.case_id));
      continue;
    }
    auto it = std::find_if(out.cases.begin(), out.cases.end(), [&](const CaseSummary& c) { return c.case_id == o.case_id; });
    if (it == out.cases.end()) {  // awaiting its rerun (infra_failed): rebuild the case from its record
      CaseSummary c;
      c.case_id = o.case_id;
      const auto& id = o.original.is_object() && o.original.contains("case") ? o.original["case"] : nlohmann::json();
      std::optional<std::string> cfg;
      if (id.is_object()) {
        c.vm = id.value("vm", "");
        c.regime = id.value("regime", "");
        c.repeat = id.value("repeat", std::int64_t{0});
        c.triplet_id = id.value("triplet_id", "");
        if (auto v = id.value("configuration", std::string()); !v.empty()) cfg = v;
      } else {  // recorded before the record named the case: the schedule row
        const auto sc = std::find_if(out.schedule.begin(), out.schedule.end(),
                                     [&](const ScheduledCase& s) { return s.case_id == o.case_id; });
        if (sc != out.schedule.end()) {
          c.vm = sc->vm;
          c.regime = sc->regime;
          c.repeat = sc->repeat;
          c.triplet_id = sc->triplet_id;
          cfg = sc->configuration;
        }
      }
      if (!cfg) {
        notes.push_back(fmt::format("case {}: neither a recorded identity nor a schedule row to reinstate it from", o.case_id));
        continue;
      }
      c.configuration = *cfg;
      out.cases.push_back(std::move(c));
      it = out.cases.end() - 1;
      out.infra_failed.erase(std::remove(out.infra_failed.begin(), out.infra_failed.end(), o.case_id),
                             out.infra_failed.end());
    }
    CaseSummary& c = *it;
    c.status = o.original_status;
    c.latency = {};
    c.usage = {};
    c.mech = {};
    c.usable = true;
    c.excluded_because.clear();
    if (!lost) {
      c.usable = o.original.value("usable", true);
      c.excluded_because = o.original.value("excluded_because", std::string());
      for (Canary k : {Canary::Compute, Canary::Sqlite}) {
        const char* name = canary_name(k);
        const auto p99 = json_number(o.original, {"canaries", name, "p99_us"});
        if (!p99) continue;
        LatencySummary l;
        l.p50_us = json_number(o.original, {"canaries", name, "p50_us"}).value_or(*p99);
        l.p95_us = json_number(o.original, {"canaries", name, "p95_us"}).value_or(*p99);
        l.p99_us = *p99;
        l.requests = static_cast<std::size_t>(json_number(o.original, {"canaries", name, "requests"}).value_or(0));
        l.censored = static_cast<std::size_t>(json_number(o.original, {"canaries", name, "censored"}).value_or(0));
        c.latency[static_cast<int>(k)] = l;
      }
    }
  }
  // Every lost case is imputed again: the worst observed p99 may have changed with the originals.
  for (auto& c : out.cases)
    if (c.lost()) {
      c.latency = {};
      c.usable = true;
      c.excluded_because.clear();
    }
  impute_lost(out);
  std::sort(out.cases.begin(), out.cases.end(),
            [](const CaseSummary& a, const CaseSummary& b) { return a.case_id < b.case_id; });
  return out;
}

}  // namespace analysis
