// `harness plan --list-policies`: the registry as a person reads it (policy.hpp).
#include "harness/case/control/policy.hpp"

#include <fmt/format.h>

namespace harness::case_ {

std::string policy_catalogue() {
  std::string out;
  for (const auto& p : policies()) {
    out += fmt::format("{}{}\n  {}\n  source: {}\n", p.name,
                       p.study_position ? " (a study arm: list it by name for the study's parameters)" : "", p.summary,
                       p.source);
    if (p.params.empty()) out += "  parameters: none\n";
    for (const auto& d : p.params) {
      std::string bounds;
      if (d.min) bounds += " min " + readable_number(*d.min);
      if (d.max) bounds += " max " + readable_number(*d.max);
      out += fmt::format("  {:<22} {:<7} {:<6} {:<16}{}  {}\n", d.name, to_string(d.kind), d.unit.empty() ? "-" : d.unit,
                         d.default_value.is_null() ? "required" : "default " + d.default_value.dump(), bounds, d.doc);
    }
    out += "\n";
  }
  return out;
}

}  // namespace harness::case_
