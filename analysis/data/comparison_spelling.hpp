#pragma once
// The one parser of a comparison's spelling (the `analysis.comparisons` key of docs/CAMPAIGN.md), used by
// the campaign loader (harness/campaign/model/campaign_arms.cpp, which adds its arm-name rule and the
// FILE:LINE:COL of the YAML node) and by the analysis (analysis/data/arms.cpp, reading the stored plan
// JSON or campaign YAML). Spellings:
//   "<canary>:<comparator>"             the study's (legacy) spelling: treatment = the study's
//                                       treatment, bounded-reclaim (study_facts.hpp kStudyTreatment)
//   "<canary>:<treatment>/<comparator>" any two arms
//   {canary, treatment, comparator}     the object form (YAML map or JSON object; its fields are
//                                       read by the caller, which knows where each one is)
// The ratio is treatment / comparator of the canary's pressure-phase p99. Lives in the analysis
// library because the campaign library links it (never the reverse).
#include "analysis/data/case_summary.hpp"

#include <optional>
#include <string>
#include <string_view>

#include "harness/error/expected.hpp"

namespace analysis {

/// A comparison as spelt: canary, treatment and comparator names (arms, not checked here
/// against any campaign's arms).
struct ComparisonSpelling {
  std::string canary;      ///< compute | sqlite
  std::string treatment;   ///< an arm name
  std::string comparator;  ///< an arm name
};

/// The canary named `name` ("compute", "sqlite"), nullopt for anything else.
std::optional<Canary> parse_canary(std::string_view name);

/// "compute, sqlite": the canaries a comparison may name, for messages.
std::string canary_list();

/// The study's treatment: the arm a "<canary>:<comparator>" spelling compares against its comparator.
std::string study_treatment_name();

/// Parses a string spelling, or the Problem (a sentence naming the text and what is wrong: no
/// ':', an unknown canary, an empty arm name) when it is neither spelling. The treatment and
/// comparator are not checked against each other (check_comparison).
harness::Expected<ComparisonSpelling> parse_comparison_text(std::string_view text);

/// Whether a parsed comparison is one, or the Problem (an unknown canary, an empty arm name,
/// treatment == comparator).
harness::Checked check_comparison(const ComparisonSpelling& c);

/// Canonical text: "<canary>:<comparator>" when the treatment is the study's treatment (so the
/// study's plans keep their hash), else "<canary>:<treatment>/<comparator>". The inverse of
/// parse_comparison_text.
std::string comparison_text(const ComparisonSpelling& c);

}  // namespace analysis
