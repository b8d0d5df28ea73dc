#pragma once
// The campaign's arms and its declared comparisons (docs/CAMPAIGN.md "Arms",
// "analysis.comparisons"): read from the YAML by the campaign loader, checked against the
// policy registry (harness/case/control/policy.hpp) and against each other.
#include <optional>
#include <string>
#include <vector>

#include "analysis/data/comparison_spelling.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/case/control/policy.hpp"
#include "harness/error/expected.hpp"
#include "harness/yaml/strict_yaml.hpp"

namespace harness::campaign {

/// One primary comparison: ratio of the canary's pressure-phase p99, treatment / comparator
/// (canary compute | sqlite, treatment and comparator arm names). The spelling and its one
/// parser: analysis/data/comparison_spelling.hpp.
using Comparison = analysis::ComparisonSpelling;

/// The treatment of the study's comparisons: the last of the study's arms (study_arms(), the
/// study's bounded reclaim), written without a treatment in the legacy spelling
/// "compute:static-zram".
std::string study_treatment();

/// Canonical text (analysis::comparison_text): "<canary>:<comparator>" when the treatment is
/// study_treatment() (so the study's plans keep their hash), else "<canary>:<treatment>/<comparator>".
std::string comparison_text(const Comparison& c);

/// Inverse of comparison_text (either spelling; analysis::parse_comparison_text) whose arm names
/// are also valid arm names (harness/case/spec/spec.hpp check_arm_name), or the Problem when
/// `text` is not one.
Expected<Comparison> parse_comparison(const std::string& text);

/// The study's four (Table 4 order): per canary (compute, sqlite), the study treatment against
/// each other study arm in the study's order.
std::vector<std::string> study_comparisons();

/// Reads `configurations:` or `arms:` (exactly one) into c.arms. Errors name FILE:LINE:COL
/// and the field (arms[2].params.interval_s), down to the part of a Json parameter
/// (arms[3].params.rules[0].do.reclaim.mib: the line and column of that node, or of its nearest
/// ancestor written in the file). A declared arm's parameters are checked against each
/// other and the campaign (harness/case/control/policy.hpp PolicyInfo::settings_check over
/// arm_settings(c, g) of every regime g), so call after cgroups, phases_s, regimes and
/// telemetry_period_ms are read.
void load_arms(yaml::Section& top, Campaign& c);

/// The settings the cases of regime `g` run under, as an arm's parameters are checked against
/// them (harness/case/control/policy.hpp ArmSettings): g's bg limit (MiB; nullopt for none) and where it
/// is written (bg_limit_field), cgroups.bg_memory_high_mib (MiB), phases_s (s),
/// telemetry_period_ms.
harness::case_::ArmSettings arm_settings(const Campaign& c, const Regime& g);

/// arm_settings of every regime of `c` whose bg limit differs from the ones before it (the
/// settings an arm's parameters must fit: each regime's cases run it), in regime order.
std::vector<harness::case_::ArmSettings> arm_settings_of_regimes(const Campaign& c);

/// Reads analysis.comparisons into c.comparisons (canonical text; each arm named must be run
/// by the campaign, treatment != comparator, no duplicates). Nothing declared: the study's
/// four. Call after load_arms.
void load_comparisons(yaml::Section& analysis, Campaign& c);

/// Whether the arms and comparisons fit design `c.design`, or the Problem (after both loads):
/// matched-blocks needs k >= 2 arms, and declared comparisons (or the study's arms, for the
/// default four); matched-triplets 3 arms (or 1: a calibration, never analysed as blocks);
/// pilot needs exactly [bounded-reclaim] listed by name.
Checked check_design_arms(const Campaign& c);

}  // namespace harness::campaign
