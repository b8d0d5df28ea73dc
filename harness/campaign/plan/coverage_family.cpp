// The coverage simulation's family of a campaign (see coverage_family.hpp).
#include "harness/campaign/plan/coverage_family.hpp"

#include "analysis/data/arms.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace harness::campaign {

analysis::SimFamily coverage_family(const Campaign& c) {
  std::vector<std::string> arms;
  for (const auto& a : c.arms) arms.push_back(a.name);
  std::vector<analysis::ComparisonDef> family;
  for (const auto& text : c.comparisons) {
    const auto parsed = analysis::parse_comparison(nlohmann::json(text));
    if (!parsed)
      throw std::invalid_argument("coverage simulation: comparison '" + text + "' is not one: " + parsed.error().message);
    family.push_back(*parsed);
  }
  return analysis::sim_family(arms, family);
}

}  // namespace harness::campaign
