#pragma once
// `harness compare DB1 DB2 [DB3 ...]`: N campaigns lined up, the first (A) the reference (ours;
// mmtests' compare-kernels and lkp's ncompare line up N runs the same way). What it shows:
// - a matched-block campaign (the study's triplets or k arms): its Table 4, mechanism medians
//   and arms, every side beside the others (compare.hpp compare_sides); an A/B campaign has
//   blanks there;
// - an A/B campaign (design ab-pairs): its candidate / baseline ratio per regression metric
//   (regression.hpp), every A/B side beside the others; a matched-block campaign has blanks;
// - every setting that differs between the campaigns (recorded_settings.hpp: the stored plan's
//   campaign YAML, the arms, guest kernel, kernel command line, accelerator, harness commit, ...),
//   as a table and as one warning naming each (setting_differences.hpp, which `compare
//   --published` uses for its setting table too).
#include "analysis/compare/compare.hpp"
#include "analysis/compare/regression.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace analysis {

/// One campaign as compare reads it.
struct CompareCampaign {
  std::string label;                  ///< the DB path
  std::optional<CompareSide> side;    ///< matched-block analysis (side_from_report); nullopt: an A/B campaign
  std::vector<MetricComparison> ab;   ///< A/B: compare_variants of the DB's own two variants; empty otherwise
  /// (setting, value) as recorded_settings() reads them.
  std::vector<std::pair<std::string, std::string>> settings;
};

/// The comparison report of `campaigns` (at least two; names A, B, ... in order: side_name),
/// titled "Reclaim ablation: comparison of N campaigns, A the reference", its first summary
/// paragraph naming each campaign's DB, its Markdown within kTerminalWidth.
/// Tables: compare_table4, compare_mechanism, compare_arms (when any campaign has a side),
/// compare_ab (when any has A/B metrics: per metric and campaign: pairs, ratio, lower, upper,
/// verdict; then per later campaign X the ratio X / A), compare_settings (the settings that
/// differ: setting, one value per campaign, differs). Warnings: compare_sides' (TCG), then one
/// naming every differing setting with each campaign's value. extra: {campaigns: [{name, db,
/// kind: "matched-blocks" | "ab"}], settings_compared: n, setting_differences: [text]}.
/// Errors: std::invalid_argument for fewer than two campaigns or more than 26.
Report compare_campaigns(const std::vector<CompareCampaign>& campaigns);

}  // namespace analysis
