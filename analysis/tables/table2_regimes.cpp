// Table 2: pressure regimes (see table2_regimes.hpp).
#include "analysis/tables/table2_regimes.hpp"

#include <map>
#include <set>

namespace analysis {
namespace {

using nlohmann::json;

}  // namespace

Table table2(const TripletSet& ts) {
  const int k_arms = static_cast<int>(ts.arms.size());
  Table t{"table2_regimes", "Table 2. Pressure regimes",
          {{"regime", 0}, {"allocation rate, nominal (MiB/s)", 0}, {"allocation rate, achieved median (MiB/s)", 1},
           {"pressure-episode fraction median", 3}, {"contents", 0}, {"VMs", 0}, {ts.unit + "s", 0, "triplets"}, {"cases", 0}}, {}, {}};
  std::map<std::string, std::vector<const Triplet*>> by;
  for (const auto& tr : ts.triplets) by[tr.regime].push_back(&tr);
  for (auto& [regime, list] : by) {
    std::set<std::string> vms;
    std::vector<std::optional<double>> achieved, episode;
    for (auto* tr : list) {
      vms.insert(tr->vm);
      for (const auto* c : tr->cases) {
        achieved.push_back(c->outcome.achieved_rate_mib_s);
        episode.push_back(c->outcome.episode_fraction);
      }
    }
    const auto& spec = list.front()->cases[0]->spec;
    json rate = nullptr, contents = nullptr;
    if (spec.contains("pressure")) {
      if (spec["pressure"].contains("rate_mib_s")) rate = spec["pressure"]["rate_mib_s"];
      if (spec["pressure"].contains("contents")) contents = spec["pressure"]["contents"];
    }
    t.add({regime, rate, median_cell(achieved, kNotMeasured), median_cell(episode, kNotMeasured), contents,
           static_cast<int>(vms.size()), static_cast<int>(list.size()), static_cast<int>(k_arms * list.size())});
  }
  t.notes.push_back("Achieved rate: outcome_json.load.achieved_rate_mib_s (allocated bytes / time to allocate them), "
                    "median over the regime's cases; episode fraction: outcome_json.load.episode.fraction_of_pressure. "
                    "Cases more than 10% below nominal are named in the warnings.");
  return t;
}

}  // namespace analysis
