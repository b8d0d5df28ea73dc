// The spelling of a comparison (see comparison_spelling.hpp).
#include "analysis/data/comparison_spelling.hpp"

#include "analysis/data/study_facts.hpp"

#include <fmt/format.h>

namespace analysis {

std::optional<Canary> parse_canary(std::string_view name) {
  for (Canary k : {Canary::Compute, Canary::Sqlite})
    if (name == canary_name(k)) return k;
  return std::nullopt;
}

std::string canary_list() { return fmt::format("{}, {}", canary_name(Canary::Compute), canary_name(Canary::Sqlite)); }

std::string study_treatment_name() { return kStudyArms[kStudyTreatment].name; }

harness::Expected<ComparisonSpelling> parse_comparison_text(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos)
    return harness::problem(
        fmt::format("'{}' has no ':' (expected <canary>:<comparator> or <canary>:<treatment>/<comparator>)", text));
  ComparisonSpelling c;
  c.canary = std::string(text.substr(0, colon));
  const std::string_view rest = text.substr(colon + 1);
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos) {  // the study's spelling: the study's treatment
    c.treatment = study_treatment_name();
    c.comparator = std::string(rest);
  } else {
    c.treatment = std::string(rest.substr(0, slash));
    c.comparator = std::string(rest.substr(slash + 1));
  }
  if (!parse_canary(c.canary))
    return harness::problem(fmt::format("'{}': canary '{}' is not one of {}", text, c.canary, canary_list()));
  if (c.treatment.empty() || c.comparator.empty())
    return harness::problem(fmt::format("'{}': treatment and comparator must name arms", text));
  return c;
}

harness::Checked check_comparison(const ComparisonSpelling& c) {
  if (!parse_canary(c.canary))
    return harness::problem(fmt::format("canary '{}' is not one of {}", c.canary, canary_list()));
  if (c.treatment.empty() || c.comparator.empty()) return harness::problem("treatment and comparator must name arms");
  if (c.treatment == c.comparator)
    return harness::problem(fmt::format("treatment and comparator are the same arm ({})", c.treatment));
  return {};
}

std::string comparison_text(const ComparisonSpelling& c) {
  if (c.treatment == study_treatment_name()) return c.canary + ":" + c.comparator;
  return c.canary + ":" + c.treatment + "/" + c.comparator;
}

}  // namespace analysis
