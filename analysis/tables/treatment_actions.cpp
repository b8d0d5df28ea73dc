// What each arm's policy did (see treatment_actions.hpp).
#include "analysis/tables/treatment_actions.hpp"

#include "harness/text/join.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace analysis {
namespace {

/// The trigger of one case in words: fired, would fire (no action there), or never.
const char* trigger_words(const CaseOutcome& o) {
  if (o.trigger_events > 0) return "fired";
  if (o.would_trigger_events > 0) return "would fire";
  return "never";
}

/// One completed case into `a`.
void count_case(const CaseSummary& c, ArmActions& a) {
  const CaseOutcome& o = c.outcome;
  ++a.cases;
  a.trigger_fired += o.trigger_events > 0;
  a.would_trigger += o.would_trigger_events > 0;
  a.with_writes += !o.reclaim.empty();
  a.writes += static_cast<int>(o.reclaim.size());
  std::int64_t asked = 0;
  for (const auto& r : o.reclaim) asked += r.requested_bytes;
  a.bytes_asked += asked;
  a.asked_mib.push_back(static_cast<double>(asked) / kMiB);
  a.zram_on += o.backend_on_events > 0;
  a.memory_high += o.memory_high_events > 0;
  if (case_acted(c)) ++a.acted;
  else a.not_acted.push_back(fmt::format("{} (trigger: {})", c.case_id, trigger_words(o)));
}

}  // namespace

bool case_acted(const CaseSummary& c) {
  const CaseOutcome& o = c.outcome;
  return !o.reclaim.empty() || o.backend_on_events > 0 || o.memory_high_events > 0;
}

std::vector<ArmActions> arm_actions(const TripletSet& ts) {
  std::vector<ArmActions> out;
  for (const auto& arm : ts.arms) {
    ArmActions a;
    a.arm = arm;
    a.treatment = is_family_treatment(ts, arm);
    const int k = ts.arm_index(arm);
    for (const auto& b : ts.triplets) {
      if (k < 0 || static_cast<std::size_t>(k) >= b.cases.size()) continue;
      const CaseSummary* c = b.cases[static_cast<std::size_t>(k)];
      if (c && !c->lost()) count_case(*c, a);
    }
    out.push_back(std::move(a));
  }
  return out;
}

Table treatment_actions_table(const std::vector<ArmActions>& arms) {
  Table t{"treatment_actions",
          "What each arm's policy did: cases of Table 4's blocks in which it acted",
          {{"arm", 0}, {"treatment in the family", 0, "treatment"}, {"cases (completed)", 0, "cases"},
           {"trigger fired", 0}, {"would_trigger (no action at the trigger)", 0, "would_trigger"},
           {"cases with a memory.reclaim write", 0, "cases_with_writes"}, {"memory.reclaim writes", 0, "writes"},
           {"asked, sum (MiB)", 1, "asked_sum_mib"}, {"asked per case, median (MiB)", 1, "asked_per_case_median_mib"},
           {"zram swapped on (backend_on)", 0, "zram_on"}, {"memory.high set", 0, "memory_high_set"},
           {"cases acted", 0, "acted"}},
          {},
          {}};
  for (const auto& a : arms) {
    std::vector<std::optional<double>> asked(a.asked_mib.begin(), a.asked_mib.end());
    t.add({a.arm, a.treatment ? "yes" : "no", a.cases, a.trigger_fired, a.would_trigger, a.with_writes, a.writes,
           num(static_cast<double>(a.bytes_asked) / kMiB), median_cell(asked, kNotMeasured), a.zram_on, a.memory_high,
           fmt::format("{} of {}", a.acted, a.cases)});
  }
  t.notes.push_back(
      "Counts of cases, over the completed cases of the complete blocks (Table 4's); a lost case has no record of "
      "what its policy did and is not counted. Trigger fired: a `trigger` controller event (the study's PSI "
      "trigger: bg memory.pressure some total growing by >= 1 ms in 3 consecutive 1 s windows); would_trigger: "
      "the same predicate met by a policy that takes no action there (static-zram). A case acted when its policy "
      "took at least one action on the guest: a memory.reclaim write (reclaim_actions), zram swapped on "
      "(backend_on) or bg memory.high written (memory_high_set). Asked = requested bytes of the writes, MiB "
      "(2^20 bytes). A treatment that did not act in a case keeps that case's outcome in Table 4 (intention to "
      "treat, docs/PROTOCOL.md).");
  return t;
}

nlohmann::json treatment_actions_json(const std::vector<ArmActions>& arms) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& a : arms)
    out.push_back({{"arm", a.arm}, {"treatment", a.treatment}, {"cases", a.cases}, {"trigger_fired", a.trigger_fired},
                   {"would_trigger", a.would_trigger}, {"cases_with_writes", a.with_writes}, {"writes", a.writes},
                   {"bytes_asked", a.bytes_asked}, {"asked_mib", a.asked_mib}, {"zram_on", a.zram_on},
                   {"memory_high_set", a.memory_high}, {"acted", a.acted}, {"not_acted", a.not_acted}});
  return out;
}

std::vector<std::string> not_acted_warnings(const std::vector<ArmActions>& arms, const TripletSet& ts) {
  std::vector<std::string> out;
  for (const auto& a : arms) {
    if (!a.treatment || a.acted == a.cases) continue;
    std::vector<std::string> labels;
    for (const auto& c : ts.family())
      if (c.treatment == a.arm) labels.push_back(c.label);
    out.push_back(fmt::format(
        "TREATMENT DID NOT ACT: {} took no action (no memory.reclaim write, no zram swapon, no memory.high write) in "
        "{} of its {} case(s): {}. Its comparisons ({}) are read by intention to treat: every case keeps its outcome, "
        "so they compare the arm as assigned, not the action (docs/PROTOCOL.md).",
        a.arm, a.cases - a.acted, a.cases, harness::text::join(a.not_acted), harness::text::join(labels, "; ")));
  }
  return out;
}

std::map<std::string, std::string> not_acted_notes(const std::vector<ArmActions>& arms) {
  std::map<std::string, std::string> out;
  for (const auto& a : arms)
    if (a.treatment && a.acted < a.cases)
      out[a.arm] = fmt::format("({} took no action in {} of {} case(s): read by intention to treat, see the warnings.)",
                               a.arm, a.cases - a.acted, a.cases);
  return out;
}

}  // namespace analysis
