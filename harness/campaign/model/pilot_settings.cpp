// The settings a dose depends on (see pilot_settings.hpp).
#include "harness/campaign/model/pilot_settings.hpp"

#include "harness/campaign/model/ab_settings.hpp"
#include "harness/json/optional.hpp"

#include <algorithm>

namespace harness::campaign {

const std::vector<std::string>& pilot_difference_names() {
  static const std::vector<std::string> names = [] {
    // Every leaf path of the compared settings and every group above it (regimes only as a
    // whole: its keys are the regimes' names).
    std::vector<std::string> v;
    for (const auto& d : differing_settings(pilot_match_settings(Campaign{}), nlohmann::json::object()))
      for (std::size_t dot = 0; dot != std::string::npos;) {
        dot = d.path.find('.', dot + 1);
        const std::string p = d.path.substr(0, dot);
        if (std::find(v.begin(), v.end(), p) == v.end()) v.push_back(p);
      }
    v.push_back("regimes");
    v.push_back(kGuestKernelSetting);
    v.push_back(kPilotChoiceSetting);
    return v;
  }();
  return names;
}

nlohmann::json pilot_match_settings(const Campaign& c) {
  const nlohmann::json all = comparison_settings(c);
  nlohmann::json regimes = nlohmann::json::object();
  for (const auto& g : c.regimes) {
    regimes[g.name] = {{"rate_mib_s", g.rate_mib_s}, {"contents", g.contents}};
    if (const auto p = declared_pressure_json(g); !p.empty()) regimes[g.name].update(p);  // as ab_settings.cpp
  }
  return {{"vm", all.at("vm")},
          {"phases_s", all.at("phases_s")},
          {"cgroups",
           {{"bg_memory_max_mib", c.bg_memory_max_mib}, {"bg_memory_high_mib", harness::json::or_null(c.bg_memory_high_mib)}}},
          {"pressure", all.at("pressure")},
          {"backend", all.at("backend")},
          {"trigger", all.at("trigger")},
          {"regimes", regimes},
          {"eligibility",
           {{"max_duration_s", c.eligibility_max_duration_s},
            {"min_achieved_ratio", c.eligibility_min_achieved_ratio},
            {"restoration", analysis::name_of(c.eligibility_reading.restoration)},
            {"eagain", analysis::name_of(c.eligibility_reading.eagain)}}}};
}

}  // namespace harness::campaign
