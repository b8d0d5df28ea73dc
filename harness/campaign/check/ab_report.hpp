#pragma once
// `harness check` output for humans (ours): the metric comparison table printed on
// stdout and the Markdown summary for a pull-request comment (JUnit: assertions.hpp).
#include "analysis/compare/regression.hpp"
#include "harness/campaign/check/assertions.hpp"
#include "results/provenance.hpp"

#include <string>
#include <vector>

namespace harness::campaign {

/// Everything one `harness check` judged.
struct CheckOutcome {
  std::string campaign;                              ///< campaign name
  std::string db_path;                               ///< the DB the run wrote
  std::vector<AssertionResult> assertions;           ///< absolute assertions
  std::vector<analysis::MetricComparison> metrics;   ///< empty: not an A/B campaign
  /// Where the baseline cases came from: "" (same DB) or the --baseline-db path.
  std::string baseline_db;
  std::string settings_sha256;                       ///< comparison settings digest ("" when not A/B)
  std::vector<std::string> variants;                 ///< variant_lines() of the campaign (A/B only)
  int bootstrap_replicates = 0;                      ///< B of the intervals
  std::uint64_t seed = 0;                            ///< bootstrap seed
  double regression_alpha = 0;                       ///< family-wise alpha over metrics with a tolerance
  /// The verdict rule and looks the metrics were judged with (decide: `check --until-decided`,
  /// delta-method t intervals; fixed: the plain check's bootstrap intervals).
  analysis::ComparisonRule rule{};
  /// Warnings shown under the verdict line (e.g. ab_environment.hpp same_environment_warning,
  /// environment drift allowed with --allow-env-drift).
  std::vector<std::string> warnings;
  /// The "Environment" section (ab_environment.hpp environment_markdown); "" = none.
  std::string environment_markdown;
  /// Why the comparison was refused (ab_environment.hpp check_environment_drift); "" = it was made.
  std::string refusal;
  /// Failed assertions plus metrics with verdict "regression".
  int findings() const;
};

/// One line per variant of an ab-pairs campaign (baseline first), what it sets, e.g.
/// "candidate: sysctl vm.swappiness=200; sysfs /sys/kernel/mm/lru_gen/enabled=y; cmdline
/// transparent_hugepage=never; kernel image images/next (6.1.0-50-cloud-amd64)", or
/// "baseline: nothing set (the guest as booted)". Empty for other designs.
std::vector<std::string> variant_lines(const Campaign& c);

/// Fixed-width text table, one line per metric: metric, unit, pairs, baseline, candidate,
/// ratio, interval, change, tolerance, verdict (numbers to 3 significant digits; "-" when absent).
std::string regression_table(const std::vector<analysis::MetricComparison>& metrics);

/// Markdown summary: the heading (starting "## SYNTHETIC DATA: " with the banner under it when
/// prov says the DB is synthetic: results::synthetic_banner), a verdict line (REFUSED with the
/// reason when o.refusal is set), the
/// warnings, the metric table (metric, unit, pairs, baseline,
/// candidate, ratio, interval, change, tolerance, verdict; regressions in bold, inconclusive
/// in italics), the assertion
/// table (assertion, cases, result, first failure) and per assertion every case's measured value
/// in a collapsed <details> block (what the printout leaves out), how the intervals were made, the
/// environment section, and the provenance block (results/provenance.hpp). `prov` may be null.
std::string check_markdown(const CheckOutcome& o, const results::Provenance* prov);

/// Writes check_markdown to `path`. Throws std::runtime_error naming the path.
void write_check_markdown(const std::string& path, const CheckOutcome& o, const results::Provenance* prov);

/// Default Markdown path: next to the DB, <db dir>/<db stem>-check.md.
std::string default_markdown_path(const std::string& db_path);

/// Interval / tolerance cells as the table shows them, e.g. "[1.22, 1.4]", "<= 1.2",
/// ">= 0.9", "0.9 .. 1.2", "-".
std::string interval_cell(const analysis::MetricComparison& m);
std::string tolerance_cell(const analysis::MetricComparison& m);

}  // namespace harness::campaign
