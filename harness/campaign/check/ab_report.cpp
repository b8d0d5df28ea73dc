// `harness check` text table and Markdown summary (see ab_report.hpp).
#include "harness/campaign/check/ab_report.hpp"

#include "harness/text/join.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace harness::campaign {
namespace {

std::string num(std::optional<double> v) {
  if (!v) return "-";
  if (*v >= std::numeric_limits<double>::max()) return "inf";
  return std::abs(*v) >= 1000 ? fmt::format("{:.0f}", *v) : fmt::format("{:.3g}", *v);  // no 3.2e+03
}

/// A Markdown table cell: pipes escaped, newlines flattened, and a '<' or '&' written as an
/// entity only where a renderer would take it for HTML (a tag "<x", "</", "<!", "<?"; an entity
/// "&x", "&#"), so that "<= 1.2" reads as written in every renderer (issue 59).
std::string cell(const std::string& s) {
  std::string o;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    const char next = i + 1 < s.size() ? s[i + 1] : ' ';
    const bool letter = std::isalpha(static_cast<unsigned char>(next)) != 0;
    if (ch == '|') o += "\\|";
    else if (ch == '<' && (letter || next == '/' || next == '!' || next == '?')) o += "&lt;";
    else if (ch == '&' && (letter || next == '#')) o += "&amp;";
    else if (ch == '\n' || ch == '\r') o += ' ';
    else o += ch;
  }
  return o;
}

std::vector<std::string> row(const analysis::MetricComparison& m) {
  return {m.metric, m.unit, std::to_string(m.pairs), num(m.baseline_mean), num(m.candidate_mean), num(m.ratio),
          interval_cell(m), m.change.empty() ? "-" : m.change, tolerance_cell(m), m.verdict};
}

const std::vector<std::string>& headers() {
  static const std::vector<std::string> h{"metric", "unit", "pairs", "baseline", "candidate",
                                          "ratio",  "interval", "change",   "tolerance", "verdict"};
  return h;
}

/// The assertion table (assertion, cases, result, first failure), then per assertion with a
/// measured value every case's value in a collapsed <details> block (what `harness check`
/// no longer prints: issue 59).
std::string assertions_markdown(const std::vector<AssertionResult>& assertions) {
  if (assertions.empty()) return "";
  std::string md = "| assertion | cases | result | first failure |\n| --- | ---: | --- | --- |\n";
  for (const auto& a : assertions)
    md += "| " + cell(a.name) + " | " + std::to_string(a.cases_checked) + " | " + (a.passed ? "pass" : "**FAIL**") +
          " | " + cell(a.failures.empty() ? "" : a.failures.front()) + " |\n";
  md += "\n";
  for (const auto& a : assertions) {
    if (a.measured.empty()) continue;
    md += "<details><summary>" + cell(assertion_summary(a)) + "</summary>\n\n| case | quantity | value | result |\n" +
          "| --- | --- | ---: | --- |\n";
    for (const auto& m : a.measured)
      md += "| " + cell(m.case_id) + " | " + cell(m.quantity) + " | " +
            (m.value ? fmt::format("{:.4g}", *m.value) + (m.unit == "ratio" || m.unit == "count" ? "" : " " + m.unit)
                     : std::string("not measured")) +
            " | " + (m.passed ? "ok" : "**FAIL**: " + cell(m.detail)) + " |\n";
    md += "\n</details>\n\n";
  }
  return md;
}

}  // namespace

std::vector<std::string> variant_lines(const Campaign& c) {
  std::vector<std::string> out;
  for (const auto& v : c.variants) {
    std::vector<std::string> parts;
    for (const auto& [k, val] : v.sysctls) parts.push_back("sysctl " + k + "=" + val);
    for (const auto& [k, val] : v.sysfs) parts.push_back("sysfs " + k + "=" + val);
    for (const auto& p : v.cmdline) parts.push_back("cmdline " + p);
    if (!v.kernel_image_dir.empty())
      parts.push_back("kernel image " + v.kernel_image_dir +
                      (v.kernel_release.empty() ? std::string() : " (" + v.kernel_release + ")"));
    std::string line = v.name + ": ";
    if (parts.empty()) line += "nothing set (the guest as booted)";
    line += text::join(parts, "; ");
    out.push_back(line);
  }
  return out;
}

int CheckOutcome::findings() const {
  int n = 0;
  for (const auto& a : assertions) n += a.passed ? 0 : 1;
  for (const auto& m : metrics) n += m.verdict == "regression" ? 1 : 0;
  return n;
}

std::string interval_cell(const analysis::MetricComparison& m) {
  if (!m.lower || !m.upper) return "-";
  return "[" + num(m.lower) + ", " + num(m.upper) + "]";
}

std::string tolerance_cell(const analysis::MetricComparison& m) {
  if (m.max_ratio && m.min_ratio) return num(m.min_ratio) + " to " + num(m.max_ratio);
  if (m.max_ratio) return "at most " + num(m.max_ratio);
  if (m.min_ratio) return "at least " + num(m.min_ratio);
  return "-";
}

std::string regression_table(const std::vector<analysis::MetricComparison>& metrics) {
  std::vector<std::vector<std::string>> rows{headers()};
  for (const auto& m : metrics) rows.push_back(row(m));
  std::vector<std::size_t> w(headers().size(), 0);
  for (const auto& r : rows)
    for (std::size_t j = 0; j < r.size(); ++j) w[j] = std::max(w[j], r[j].size());
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t j = 0; j < r.size(); ++j) {
      const bool right = j >= 2 && j <= 5;  // numbers
      line += j ? "  " : "";
      line += right ? fmt::format("{:>{}}", r[j], w[j]) : fmt::format("{:<{}}", r[j], w[j]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string check_markdown(const CheckOutcome& o, const results::Provenance* prov) {
  int failed = 0, regressions = 0, nodata = 0, inconclusive = 0;
  for (const auto& a : o.assertions) failed += a.passed ? 0 : 1;
  for (const auto& m : o.metrics) {
    regressions += m.verdict == "regression" ? 1 : 0;
    inconclusive += m.verdict == "inconclusive" ? 1 : 0;
    nodata += m.verdict == "no data" && (m.max_ratio || m.min_ratio) ? 1 : 0;
  }
  const bool synthetic = prov && prov->synthetic;  // said on the first line (issue 59)
  std::string md = std::string("## ") + (synthetic ? "SYNTHETIC DATA: " : "") + "harness check: " + cell(o.campaign) + "\n\n";
  if (synthetic) md += "> **Warning:** " + cell(results::synthetic_banner()) + "\n\n";
  if (!o.refusal.empty()) md += "The candidate was not compared with the baseline:\n\n```\n" + o.refusal + "```\n\n";
  md += fmt::format("**{}**: {} regression(s) in {} metric(s), {} of {} assertion(s) failed",
                    !o.refusal.empty() ? "REFUSED" : o.findings() ? "FAIL" : inconclusive ? "INCONCLUSIVE" : "PASS",
                    regressions, o.metrics.size(), failed, o.assertions.size());
  if (inconclusive) md += fmt::format("; {} inconclusive (the interval does not decide: more pairs would)", inconclusive);
  if (nodata) md += fmt::format("; {} metric(s) with a tolerance had no data", nodata);
  md += ".\n\n";
  for (const auto& w : o.warnings) md += "> **Warning:** " + cell(w) + "\n\n";
  if (!o.variants.empty()) {
    md += "Variants:\n";
    for (const auto& v : o.variants) md += "- " + cell(v) + "\n";
    md += "\n";
  }
  if (!o.metrics.empty()) {
    md += "| " ;
    for (const auto& h : headers()) md += h + " | ";
    md.pop_back();
    md += "\n|";
    for (std::size_t j = 0; j < headers().size(); ++j) md += j >= 2 && j <= 5 ? " ---: |" : " --- |";
    md += "\n";
    for (const auto& m : o.metrics) {
      auto r = row(m);
      if (m.verdict == "regression") r.back() = "**regression**";
      if (m.verdict == "inconclusive") r.back() = "*inconclusive*";
      md += "|";
      for (const auto& c : r) md += " " + cell(c) + " |";
      md += "\n";
    }
    const double level = o.metrics.front().level;
    if (o.rule.verdicts == analysis::VerdictRule::decide)
      md += fmt::format(
          "\nRatio = candidate / baseline of the stratified means (strata: vm, regime, configuration; pairs share vm, "
          "regime, repeat and configuration). Intervals: delta-method Student-t intervals of the ratio at {:g}% each "
          "(Bonferroni: family-wise alpha {:g} over the metrics with a tolerance and the {} look(s) of "
          "`--until-decided`; docs/CI.md \"Deciding with more pairs\"). Change: higher or lower when the interval "
          "excludes 1. A metric regresses when its whole interval lies beyond its tolerance, is decided ok when its "
          "whole interval lies within it, and is inconclusive otherwise (more pairs would decide).\n",
          level * 100, o.regression_alpha, o.rule.looks);
    else
      md += fmt::format(
          "\nRatio = candidate / baseline of the stratified means (strata: vm, regime, configuration; pairs share vm, "
          "regime, repeat and configuration). Intervals: stratified bootstrap percentile intervals at {:g}% each "
          "(Bonferroni: family-wise alpha {:g} over the metrics with a tolerance), B = {}, seed {}. Change: higher or "
          "lower when the interval excludes 1, whatever the tolerance. A metric regresses when its whole interval lies "
          "beyond its tolerance; it is inconclusive when its ratio is past the tolerance but its interval is not "
          "wholly beyond it.\n",
          level * 100, o.regression_alpha, o.bootstrap_replicates, o.seed);
    md += "Baseline cases: " +
          (o.baseline_db.empty() ? std::string("this run's DB")
                                 : "stored baseline `" + o.baseline_db + "` (an earlier run: each pair spans two runs)") +
          (o.settings_sha256.empty() ? "" : "; comparison settings sha256 `" + o.settings_sha256 + "`") + ".\n\n";
  }
  md += assertions_markdown(o.assertions);
  md += o.environment_markdown;
  md += "Database: `" + o.db_path + "`\n\n";
  if (prov) md += results::provenance_markdown(*prov);
  return md;
}

void write_check_markdown(const std::string& path, const CheckOutcome& o, const results::Provenance* prov) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error(path + ": cannot write the Markdown summary");
  f << check_markdown(o, prov);
  if (!f) throw std::runtime_error(path + ": write failed");
}

std::string default_markdown_path(const std::string& db_path) {
  const std::filesystem::path p(db_path);
  return (p.parent_path() / (p.stem().string() + "-check.md")).string();
}

}  // namespace harness::campaign
