// The verdict in the report (see report_verdict.hpp).
#include "analysis/report/report_verdict.hpp"

#include "analysis/data/arms.hpp"
#include "analysis/data/study_facts.hpp"
#include "harness/text/join.hpp"

#include <fmt/format.h>

namespace analysis {
namespace {

using nlohmann::json;

/// A family larger than the study's four: at which level, and over how many blocks, the study's
/// four were judged here (those of them the family holds), beside the study's 98.75% over 60
/// triplets. "" for a family of at most four comparisons.
std::string study_four_line(const PrimaryResult& pr) {
  if (pr.m <= 4) return "";
  std::vector<std::string> held;
  for (const auto& s : study_comparisons())
    for (const auto& c : pr.family)
      if (c.label == s.label) held.push_back(s.label);
  if (held.empty())
    return fmt::format("The declared family of {} holds none of the study's four comparisons.", pr.m);
  return fmt::format(
      "The study's four comparisons were judged here at {:.6g}% (1 - {}/{}, the declared family of {}), not at the "
      "study's 98.75% (1 - 0.05/4), over {} matched {}{} (the study: {} blocks of its three arms){}.",
      pr.level * 100, pr.alpha, pr.m, pr.m, pr.comparisons.empty() ? 0 : pr.comparisons.front().triplets, pr.unit,
      pr.comparisons.empty() || pr.comparisons.front().triplets == 1 ? "" : "s", kStudyTriplets,
      held.size() == 4 ? std::string()
                       : fmt::format("; the family holds {} of them ({})", held.size(), harness::text::join(held, "; ")));
}

}  // namespace

void verdict_summary(const PrimaryResult& pr, const std::map<std::string, std::string>& acted, Report& r) {
  std::vector<std::string> lines{"**Verdict (predefined rule, prespecified intervals):** " + pr.verdict.text};
  if (!pr.per_treatment && !pr.comparisons.empty())
    if (auto it = acted.find(pr.comparisons.front().treatment); it != acted.end()) lines.back() += " " + it->second;
  for (const auto& [t, v] : pr.by_treatment) {
    std::string line = fmt::format("**Verdict for {} (prespecified, its own comparisons):** {}", t, v.text);
    if (auto it = acted.find(t); it != acted.end()) line += " " + it->second;
    lines.push_back(std::move(line));
  }
  if (const auto s = study_four_line(pr); !s.empty()) lines.push_back(s);
  r.summary.insert(r.summary.begin(), lines.begin(), lines.end());
  std::string s = "Estimates: ";
  for (std::size_t i = 0; i < pr.comparisons.size(); ++i) {
    const auto& c = pr.comparisons[i];
    s += fmt::format("{}{} {:.3f} [{:.3f}, {:.3f}] ({:+.1f}%)", i ? "; " : "", c.label, c.estimate, c.lower, c.upper,
                     c.percent_change);
  }
  r.summary.push_back(s + ".");
}

json verdict_json(const PrimaryResult& pr) {
  json bt = json::array();
  for (const auto& [t, v] : pr.by_treatment)
    bt.push_back({{"treatment", t}, {"general_benefit", v.general_benefit}, {"harm", v.harm}, {"failed", v.failed},
                  {"text", v.text}});
  return {{"assessable", pr.verdict.assessable},
          {"per_treatment", pr.per_treatment},
          {"general_benefit", pr.per_treatment ? json(nullptr) : json(pr.verdict.general_benefit)},
          {"harm", pr.verdict.harm},
          {"failed", pr.verdict.failed},
          {"text", pr.verdict.text},
          {"by_treatment", bt},
          {"study_four", study_four_line(pr)}};
}

}  // namespace analysis
