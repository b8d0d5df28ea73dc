// The campaign of a sequential check (see check_sequential.hpp).
#include "harness/campaign/check/check_sequential.hpp"

#include "harness/campaign/plan/schedule.hpp"
#include "harness/json/limited_parse.hpp"
#include "harness/campaign/store/states.hpp"
#include "results/store/attempt_views.hpp"
#include "results/store/meta.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace harness::campaign {

int pairs_per_repeat(const Campaign& c) {
  return static_cast<int>(c.vms.size() * c.regimes.size() * c.arms.size());
}

Campaign sequential_campaign(const Campaign& c, int max_pairs) {
  const std::string head = c.file + ": --until-decided: ";
  if (c.design != "ab-pairs")
    throw CampaignError(head + "field design.kind: needs ab-pairs (this campaign is " + c.design + ")");
  if (c.tolerances.empty())
    throw CampaignError(head + "field regression.tolerances: none given, so there is nothing to decide");
  if (c.triplets_per_regime > 0)
    throw CampaignError(head + "field design.triplets_per_regime: looks add repeats; give design.repeats instead");
  const int per = pairs_per_repeat(c);
  if (per < 1) throw CampaignError(head + "the design plans no pair");
  const int cap = max_pairs / per;
  if (cap < c.repeats)
    throw CampaignError(head + "--max-pairs " + std::to_string(max_pairs) + " is below the " +
                        std::to_string(c.repeats * per) + " pairs of field design.repeats (" +
                        std::to_string(c.repeats) + " x " + std::to_string(per) + " pairs per repeat)");
  Campaign s = c;
  s.sequential = SequentialDesign{max_pairs, c.repeats, cap};
  s.repeats = cap;
  return s;
}

analysis::LookSchedule sequential_looks(const Campaign& seq) {
  if (!seq.sequential) throw std::logic_error("sequential_looks: not a sequential campaign");
  return analysis::look_schedule(seq.sequential->first_repeats, seq.sequential->cap_repeats);
}

std::set<std::string> cases_after_look(const Campaign& seq, int look) {
  const auto looks = sequential_looks(seq);
  if (look < 1 || look > looks.looks())
    throw std::out_of_range("cases_after_look: look " + std::to_string(look) + " of " + std::to_string(looks.looks()));
  const int upto = looks.repeats[static_cast<std::size_t>(look - 1)];
  std::set<std::string> out;
  for (const auto& k : plan(seq).cases)
    if (k.repeat > upto) out.insert(k.case_id);
  return out;
}

int look_reached(const Campaign& seq, results::Db& db) {
  const auto looks = sequential_looks(seq);
  std::map<std::string, int> repeat_of;
  for (const auto& k : plan(seq).cases) repeat_of[k.case_id] = k.repeat;
  int furthest = 0;  // the highest repeat of a case that ran
  for (const auto& id : results::started_case_ids(db, kPendingState))
    if (const auto it = repeat_of.find(id); it != repeat_of.end()) furthest = std::max(furthest, it->second);
  for (int k = 1; k < looks.looks(); ++k)
    if (looks.repeats[static_cast<std::size_t>(k - 1)] >= furthest) return k;
  return looks.looks();
}

bool look_decides(const Judgement& j) {
  if (j.verdict == CheckVerdict::finding || j.verdict == CheckVerdict::cannot_judge) return true;
  return analysis::sequential_stop(j.outcome.metrics);
}

std::optional<int> stored_max_pairs(results::Db& db) {
  const auto plan = results::meta_value(db, "schedule_json");
  if (!plan) return std::nullopt;
  const auto doc = harness::json::parse(*plan, "schedule JSON");
  const auto it = doc.find("sequential");
  if (it == doc.end() || !it->is_object() || !it->contains("max_pairs")) return std::nullopt;
  return it->at("max_pairs").get<int>();
}

}  // namespace harness::campaign
