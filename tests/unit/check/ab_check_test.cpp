// `harness check` for A/B campaigns, in process:
//   - the comparison-settings digest: candidate, regression, assertions, runner and name
//     differences are ignored; every other difference is refused and listed by dotted path;
//   - JUnit: one testcase per assertion and per metric, parsed as XML (Boost.PropertyTree):
//     counts, a regression's <failure> carrying ratio, interval, tolerance and pairs, "no data"
//     as <skipped>, "ok"/"reported" passed with the numbers in <system-out>;
//   - Markdown: the metric table's columns and cells, the verdict line, the provenance block;
//   - all_cases_completed ignores the cases a --baseline-db check does not run.
#include "analysis/compare/regression.hpp"
#include "analysis/simulate/synthetic.hpp"
#include "harness/campaign/check/ab_report.hpp"
#include "harness/campaign/model/ab_settings.hpp"
#include "harness/campaign/check/assertions.hpp"
#include "harness/pool/local_qemu/config.hpp"
#include "results/db.hpp"

#include <boost/property_tree/ptree.hpp>
#include <fmt/format.h>
#include <boost/property_tree/xml_parser.hpp>
#include <gtest/gtest.h>

#include "harness/case/control/policy.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <unistd.h>

namespace {

namespace hc = harness::campaign;
namespace fs = std::filesystem;
using boost::property_tree::ptree;

fs::path tmp(const std::string& name) {
  return fs::temp_directory_path() / ("hk-abcheck-" + std::to_string(::getpid()) + "-" + name);
}

hc::Variant variant(const std::string& name, const std::string& swappiness) {
  hc::Variant v;
  v.name = name;
  v.sysctls = {{"vm.swappiness", swappiness}};
  return v;
}

/// A filled-in A/B campaign as the loader would produce it.
hc::Campaign ab_campaign() {
  hc::Campaign c;
  c.file = "ci-regression.yaml";
  c.yaml_text = "# text";
  c.name = "ci-regression";
  c.kind = "ci";
  c.seed = 42;
  c.pinned_commit = "any";
  c.provider = "local-qemu";
  c.engine = harness::pool::local_qemu::make_config(1);
  c.vms = {"vm0"};
  c.warmup_s = 10;
  c.pressure_s = 30;
  c.recovery_s = 10;
  c.bg_memory_max_mib = 300;
  c.zram_disksize_mib = 512;
  c.zram_algorithm = "lzo-rle";
  c.swapfile_path = "/var/lib/harness/swapfile";
  c.allocation_mib = 600;
  c.active_set_mib = 128;
  c.regimes = {{"slow-structured", 16, "structured"}, {"fast-random", 64, "random"}};
  c.sqlite_db_path = "/var/lib/harness/canary.db";
  for (const auto& name : harness::case_::study_arms()) {
    hc::Arm a;
    a.name = a.policy = name;
    a.study = true;
    c.arms.push_back(a);
  }
  c.design = "ab-pairs";
  c.repeats = 2;
  c.dose_mib = 96;
  c.bootstrap_replicates = 2000;
  c.assertions = {{"all_cases_completed", std::nullopt, std::nullopt, 30}};
  c.variants = {variant("baseline", "60"), variant("candidate", "200")};
  c.tolerances = {{"reclaim_duration", 1.2, std::nullopt, 40}};
  return c;
}

std::vector<std::string> paths(const std::vector<hc::SettingDifference>& d) {
  std::vector<std::string> p;
  for (const auto& x : d) p.push_back(x.path);
  return p;
}

TEST(AbSettings, IgnoresCandidateRegressionAssertionsRunnerAndName) {
  const auto a = ab_campaign();
  auto b = a;
  b.name = "other-name";
  b.file = "elsewhere/other.yaml";
  b.yaml_text = "# another text, comments and key order";
  b.variants[1].sysctls = {{"vm.swappiness", "10"}};
  b.variants[1].cmdline = {"transparent_hugepage=never"};
  b.variants[1].kernel_image_dir = "images/next";
  b.variants[1].sysfs = {{"/sys/kernel/mm/lru_gen/enabled", "y"}};
  b.regression_alpha = 0.01;
  b.tolerances = {{"compute_p99", 1.5, 0.5, 3}};
  b.assertions.clear();
  b.max_infra_retries = 7;
  b.case_timeout_s = 99;
  b.poll_interval_ms = 5;
  EXPECT_EQ(hc::comparison_settings_sha256(a), hc::comparison_settings_sha256(b));
  EXPECT_TRUE(hc::differing_settings(hc::comparison_settings(a), hc::comparison_settings(b)).empty());
  EXPECT_TRUE(std::regex_match(hc::comparison_settings_sha256(a), std::regex("[0-9a-f]{64}")));
}

TEST(AbSettings, ListsExactlyTheDifferingDottedPaths) {
  const auto a = ab_campaign();
  auto b = a;
  b.seed = 43;
  b.bg_memory_max_mib = 320;
  b.regimes[1].rate_mib_s = 128;
  b.variants[0].sysctls = {{"vm.swappiness", "10"}};
  b.variants[0].cmdline = {"lru_gen=0"};
  b.engine = harness::pool::local_qemu::make_config(1, true, "tcg");
  const auto d = hc::differing_settings(hc::comparison_settings(a), hc::comparison_settings(b));
  EXPECT_EQ(paths(d), (std::vector<std::string>{"cgroups.bg_memory_max_mib", "provider.accelerator",
                                                "regimes[1].rate_mib_s", "seed", "variants.baseline.cmdline",
                                                "variants.baseline.sysctls.vm.swappiness"}));
  EXPECT_NE(hc::comparison_settings_sha256(a), hc::comparison_settings_sha256(b));
  std::map<std::string, hc::SettingDifference> by;
  for (const auto& x : d) by[x.path] = x;
  EXPECT_EQ(by["seed"].ours, "42");
  EXPECT_EQ(by["seed"].theirs, "43");
  EXPECT_EQ(by["variants.baseline.sysctls.vm.swappiness"].ours, "\"60\"");
  EXPECT_EQ(by["variants.baseline.sysctls.vm.swappiness"].theirs, "\"10\"");
  EXPECT_EQ(by["variants.baseline.cmdline"].theirs, "[\"lru_gen=0\"]");
}

TEST(AbSettings, TheDelayedSwapfileSettingIsCompared) {
  // backend.delayed_swapfile changes what delayed-activation does before its trigger
  // (docs/CAMPAIGN.md): two campaigns that differ in it are not the same comparison.
  const auto a = ab_campaign();
  auto b = a;
  b.delayed_swapfile = harness::case_::DelayedSwapfile::Off;
  const auto d = hc::differing_settings(hc::comparison_settings(a), hc::comparison_settings(b));
  EXPECT_EQ(paths(d), (std::vector<std::string>{"backend.delayed_swapfile"}));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].ours, "\"active\"");
  EXPECT_EQ(d[0].theirs, "\"off\"");
  EXPECT_NE(hc::comparison_settings_sha256(a), hc::comparison_settings_sha256(b));
}

TEST(AbSettings, AKeyOnOneSideOnlyIsListedAsAbsent) {
  const auto a = ab_campaign();
  auto b = a;
  b.variants[0].sysctls.push_back({"vm.watermark_scale_factor", "100"});
  b.regimes.push_back({"fast-structured", 64, "structured"});
  const auto d = hc::differing_settings(hc::comparison_settings(a), hc::comparison_settings(b));
  EXPECT_EQ(paths(d), (std::vector<std::string>{"regimes[2].contents", "regimes[2].name", "regimes[2].rate_mib_s",
                                                "variants.baseline.sysctls.vm.watermark_scale_factor"}));
  for (const auto& x : d) EXPECT_EQ(x.ours, "(absent)") << x.path;
  EXPECT_EQ(d.back().theirs, "\"100\"");
}

/// A synthetic A/B DB whose candidate is 1.5x on reclaim duration with zero stall counters
/// (bg_psi_* and refaults: "no data"), compared with tolerances on four metrics.
struct Compared {
  std::string db = tmp("compared.db").string();
  hc::Campaign c = ab_campaign();
  std::vector<analysis::MetricComparison> metrics;
  Compared() {
    analysis::SyntheticAbOptions o;
    o.reclaim_ratio = 1.5;
    o.stall_scale = 0;
    analysis::write_synthetic_ab(db, o);
    c.tolerances = {{"reclaim_duration", 1.2, std::nullopt, 1},
                    {"compute_p99", 1.3, std::nullopt, 2},
                    {"achieved_ratio", std::nullopt, 0.9, 3},
                    {"bg_psi_some", 1.2, std::nullopt, 4}};
    metrics = analysis::compare_variants(db, db, c.regression_design());
  }
  ~Compared() { fs::remove(db); }
  std::vector<hc::AssertionResult> assertions() const {
    hc::AssertionResult ok, bad;
    ok.name = "all_cases_completed";
    ok.passed = true;
    ok.cases_checked = 72;
    bad.name = "trigger_within_s <= 3";
    bad.failures = {"c1: trigger fired 4.0 s after the pressure phase began (<= 3 allowed) a|b <x>"};
    bad.cases_checked = 72;
    return {ok, bad};
  }
};

TEST(AbJUnit, OneTestcasePerAssertionAndMetricWithTheNumbers) {
  Compared x;
  const auto path = tmp("junit.xml").string();
  hc::write_junit(path, x.c.name, x.assertions(), nullptr, &x.metrics);
  ptree pt;
  boost::property_tree::read_xml(path, pt);
  const ptree& suite = pt.get_child("testsuite");
  EXPECT_EQ(suite.get<int>("<xmlattr>.tests"), 2 + 10);
  EXPECT_EQ(suite.get<int>("<xmlattr>.failures"), 2);  // the failed assertion + reclaim_duration
  EXPECT_EQ(suite.get<int>("<xmlattr>.skipped"), 3);   // bg_psi_some, bg_psi_full, refaults: no data
  std::map<std::string, const ptree*> metric_cases;
  int assertion_cases = 0;
  for (const auto& [tag, tc] : suite) {
    if (tag != "testcase") continue;
    const auto cls = tc.get<std::string>("<xmlattr>.classname");
    if (cls == x.c.name) ++assertion_cases;
    else if (cls == x.c.name + ".regression") metric_cases[tc.get<std::string>("<xmlattr>.name")] = &tc;
    else ADD_FAILURE() << "unexpected classname " << cls;
  }
  EXPECT_EQ(assertion_cases, 2);
  ASSERT_EQ(metric_cases.size(), analysis::regression_metrics().size());
  auto props = [](const ptree& tc) {
    std::map<std::string, std::string> m;
    for (const auto& [tag, p] : tc.get_child("properties"))
      if (tag == "property") m[p.get<std::string>("<xmlattr>.name")] = p.get<std::string>("<xmlattr>.value");
    return m;
  };
  const auto mc = [&](const std::string& n) -> const analysis::MetricComparison& {
    for (const auto& m : x.metrics)
      if (m.metric == n) return m;
    throw std::runtime_error(n);
  };
  // The regression: a <failure> whose message has ratio, interval, tolerance and pairs.
  const ptree& rd = *metric_cases.at("reclaim_duration");
  ASSERT_TRUE(rd.get_child_optional("failure"));
  const auto msg = rd.get<std::string>("failure.<xmlattr>.message");
  const auto& m = mc("reclaim_duration");
  EXPECT_NE(msg.find(fmt::format("ratio {:.3g}", *m.ratio)), std::string::npos) << msg;
  EXPECT_NE(msg.find(fmt::format("[{:.3g}, {:.3g}]", *m.lower, *m.upper)), std::string::npos) << msg;
  EXPECT_NE(msg.find("max_ratio 1.2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("12 pairs"), std::string::npos) << msg;
  EXPECT_EQ(props(rd).at("verdict"), "regression");
  EXPECT_EQ(props(rd).at("pairs"), "12");
  EXPECT_EQ(std::stod(props(rd).at("ratio")), std::stod(fmt::format("{:.6g}", *m.ratio)));
  EXPECT_EQ(props(rd).at("max_ratio"), "1.2");
  // no data -> skipped with the reason; ok / reported -> passed, numbers in system-out.
  const ptree& ps = *metric_cases.at("bg_psi_some");
  EXPECT_TRUE(ps.get_child_optional("skipped"));
  EXPECT_FALSE(ps.get_child_optional("failure"));
  EXPECT_NE(ps.get<std::string>("skipped.<xmlattr>.message").find("baseline mean is 0"), std::string::npos);
  for (const char* n : {"compute_p99", "swapout"}) {
    const ptree& tc = *metric_cases.at(n);
    EXPECT_FALSE(tc.get_child_optional("failure")) << n;
    EXPECT_FALSE(tc.get_child_optional("skipped")) << n;
    const auto out = tc.get<std::string>("system-out");
    EXPECT_NE(out.find(fmt::format("ratio {:.3g}", *mc(n).ratio)), std::string::npos) << out;
    EXPECT_EQ(props(tc).at("verdict"), std::string(n) == "swapout" ? "reported" : "ok");
  }
  fs::remove(path);
}

TEST(AbJUnit, AnInconclusiveMetricIsSkippedNotPassed) {
  // Not decided (the check exits 5): a CI test report must not count the metric as passed.
  Compared x;
  analysis::MetricComparison m;
  m.metric = "compute_p99";
  m.unit = "ms";
  m.verdict = "inconclusive";
  m.detail = "ratio 1.46 [1.41, 1.51] > 1.43 allowed, interval not wholly beyond it";
  const std::vector<analysis::MetricComparison> metrics{m};
  const auto path = tmp("junit-inconclusive.xml").string();
  hc::write_junit(path, x.c.name, x.assertions(), nullptr, &metrics);
  ptree pt;
  boost::property_tree::read_xml(path, pt);
  EXPECT_EQ(pt.get<int>("testsuite.<xmlattr>.skipped"), 1);
  const ptree* tc = nullptr;
  for (const auto& [tag, t] : pt.get_child("testsuite"))
    if (tag == "testcase" && t.get<std::string>("<xmlattr>.name") == "compute_p99") tc = &t;
  ASSERT_NE(tc, nullptr);
  ASSERT_TRUE(tc->get_child_optional("skipped"));
  EXPECT_FALSE(tc->get_child_optional("failure"));
  EXPECT_EQ(tc->get<std::string>("skipped.<xmlattr>.message").rfind("inconclusive: compute_p99: ratio 1.46", 0), 0u);
  fs::remove(path);
}

TEST(AbJUnit, WithoutMetricsTheAssertionSuiteIsUnchanged) {
  Compared x;
  const auto path = tmp("junit-plain.xml").string();
  hc::write_junit(path, x.c.name, x.assertions());
  ptree pt;
  boost::property_tree::read_xml(path, pt);
  EXPECT_EQ(pt.get<int>("testsuite.<xmlattr>.tests"), 2);
  EXPECT_EQ(pt.get<int>("testsuite.<xmlattr>.failures"), 1);
  EXPECT_EQ(pt.get<int>("testsuite.<xmlattr>.skipped"), 0);
  int n = 0;
  for (const auto& [tag, tc] : pt.get_child("testsuite")) n += tag == "testcase";
  EXPECT_EQ(n, 2);
  fs::remove(path);
}

/// The Markdown table rows under the header line starting "| metric |", split into cells.
std::vector<std::vector<std::string>> md_table(const std::string& md, const std::string& first_header) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(md);
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("| " + first_header + " |", 0) == 0) in_table = true;
    if (!in_table) continue;
    if (line.empty() || line[0] != '|') break;
    std::vector<std::string> cells;
    std::string cur;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
        cur += '|';
        ++i;
      } else if (line[i] == '|') {
        cells.push_back(cur.substr(1, cur.size() >= 2 ? cur.size() - 2 : 0));
        cur.clear();
      } else {
        cur += line[i];
      }
    }
    rows.push_back(cells);
  }
  return rows;
}

TEST(AbMarkdown, MetricTableVerdictAndProvenance) {
  Compared x;
  hc::CheckOutcome o;
  o.campaign = x.c.name;
  o.db_path = "runs/ci.db";
  o.assertions = x.assertions();
  o.metrics = x.metrics;
  o.baseline_db = "base.db";
  o.settings_sha256 = hc::comparison_settings_sha256(x.c);
  o.bootstrap_replicates = 2000;
  o.seed = 42;
  o.regression_alpha = 0.05;
  EXPECT_EQ(o.findings(), 2);
  results::Provenance p;
  p.build = {"0.9.0", "0123456789012345678901234567890123456789", false};
  p.campaign_name = x.c.name;
  p.command_line = "harness check ci.yaml --baseline-db base.db";
  const auto md = hc::check_markdown(o, &p);
  EXPECT_EQ(md.rfind("## harness check: ci-regression\n", 0), 0u) << md;
  EXPECT_NE(md.find("**FAIL**: 1 regression(s) in 10 metric(s), 1 of 2 assertion(s) failed"), std::string::npos) << md;
  EXPECT_NE(md.find(results::provenance_markdown(p)), std::string::npos);
  EXPECT_NE(md.find("stored baseline `base.db`"), std::string::npos);
  EXPECT_NE(md.find(o.settings_sha256), std::string::npos);
  const auto t = md_table(md, "metric");
  ASSERT_EQ(t.size(), 2u + 10u);  // header, alignment row, one row per metric
  EXPECT_EQ(t[0], (std::vector<std::string>{"metric", "unit", "pairs", "baseline", "candidate", "ratio", "interval",
                                            "change", "tolerance", "verdict"}));
  std::map<std::string, std::vector<std::string>> rows;
  for (std::size_t i = 2; i < t.size(); ++i) rows[t[i][0]] = t[i];
  const auto& rd = rows.at("reclaim_duration");
  const auto& m = x.metrics.front();
  ASSERT_EQ(m.metric, "reclaim_duration");
  EXPECT_EQ(rd[1], "s");
  EXPECT_EQ(rd[2], "12");
  EXPECT_EQ(rd[5], fmt::format("{:.3g}", *m.ratio));
  EXPECT_EQ(rd[6], fmt::format("[{:.3g}, {:.3g}]", *m.lower, *m.upper));
  EXPECT_EQ(rd[7], "higher");  // the whole interval above 1
  EXPECT_EQ(rd[8], "at most 1.2");  // issue 59: words every renderer shows as meant (before: "&lt;= 1.2")
  EXPECT_EQ(rd[9], "**regression**");
  EXPECT_EQ(rows.at("achieved_ratio")[8], "at least 0.9");
  EXPECT_EQ(rows.at("achieved_ratio")[9], "ok");
  EXPECT_EQ(rows.at("bg_psi_some")[5], "-");
  EXPECT_EQ(rows.at("bg_psi_some")[7], "-");
  EXPECT_EQ(rows.at("bg_psi_some")[9], "no data");
  EXPECT_EQ(rows.at("swapout")[8], "-");
  EXPECT_EQ(rows.at("swapout")[3].find('e'), std::string::npos) << "no exponent notation: " << rows.at("swapout")[3];
  EXPECT_EQ(rows.at("swapout")[9], "reported");
  // The assertion table keeps a pipe in a failure line inside its cell.
  const auto a = md_table(md, "assertion");
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[3].size(), 4u);
  EXPECT_EQ(a[3][2], "**FAIL**");
  EXPECT_NE(a[3][3].find("a|b &lt;x>"), std::string::npos) << a[3][3];  // no raw HTML for GitHub
  // Issue 59: a '<' that starts no tag stays as written, not "&lt;", which a plain-text reader sees.
  EXPECT_NE(a[3][3].find("(<= 3 allowed)"), std::string::npos) << a[3][3];
}

TEST(AbMarkdown, AaPassesAndDefaultPathIsNextToTheDb) {
  const auto db = tmp("aa.db").string();
  analysis::write_synthetic_ab(db, analysis::SyntheticAbOptions{});
  auto c = ab_campaign();
  hc::CheckOutcome o;
  o.campaign = c.name;
  o.db_path = db;
  o.metrics = analysis::compare_variants(db, db, c.regression_design());
  EXPECT_EQ(o.findings(), 0);
  const auto md = hc::check_markdown(o, nullptr);
  EXPECT_NE(md.find("**PASS**: 0 regression(s) in 10 metric(s)"), std::string::npos) << md;
  EXPECT_EQ(md.find("**regression**"), std::string::npos);
  EXPECT_NE(md.find("this run's DB"), std::string::npos);
  EXPECT_EQ(hc::default_markdown_path("/tmp/x/run.db"), "/tmp/x/run-check.md");
  EXPECT_EQ(hc::default_markdown_path("run.db"), "run-check.md");
  const auto table = hc::regression_table(o.metrics);
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 11);  // header + 10 metrics
  EXPECT_EQ(table.rfind("metric", 0), 0u);
  fs::remove(db);
}

TEST(AbMarkdown, VariantLinesSayWhatEachVariantSetsAndTheSummaryListsThem) {
  auto c = ab_campaign();
  c.variants[0].sysctls.clear();
  c.variants[1].sysfs = {{"/sys/kernel/mm/lru_gen/enabled", "y"}};
  c.variants[1].cmdline = {"transparent_hugepage=never"};
  c.variants[1].kernel_image_dir = "images/next";
  c.variants[1].kernel_release = "6.1.0-50-cloud-amd64";
  const auto lines = hc::variant_lines(c);
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "baseline: nothing set (the guest as booted)",
                       "candidate: sysctl vm.swappiness=200; sysfs /sys/kernel/mm/lru_gen/enabled=y; cmdline "
                       "transparent_hugepage=never; kernel image images/next (6.1.0-50-cloud-amd64)"}));
  hc::CheckOutcome o;
  o.campaign = c.name;
  o.db_path = "run.db";
  o.baseline_db = "base.db";
  o.variants = lines;
  o.metrics = {analysis::MetricComparison{}};
  o.metrics[0].metric = "refaults";
  o.metrics[0].level = 0.995;
  const auto md = hc::check_markdown(o, nullptr);
  EXPECT_NE(md.find("Variants:\n- baseline: nothing set (the guest as booted)\n- candidate: sysctl vm.swappiness=200;"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("stored baseline `base.db` (an earlier run: each pair spans two runs)"), std::string::npos) << md;
  hc::Campaign triplets = c;
  triplets.design = "matched-triplets";
  triplets.variants.clear();
  EXPECT_TRUE(hc::variant_lines(triplets).empty());
}

TEST(AbAssertions, AllCasesCompletedIgnoresCasesNotRunOnPurpose) {
  const auto db = tmp("notrun.db").string();
  analysis::write_synthetic_campaign(db, analysis::SyntheticOptions{.vms = 1, .regimes = {"slow-random"},
                                                                    .triplets_per_stratum = 1, .missing_cases = 1});
  results::Db d(db, results::Db::Mode::ReadOnly);
  std::string pending;
  {
    results::Stmt q(d, "SELECT case_id FROM schedule WHERE state = 'pending'");
    ASSERT_TRUE(q.step());
    pending = q.text(0);
  }
  hc::Campaign c;
  c.assertions = {{"all_cases_completed", std::nullopt, std::nullopt, 1}};
  EXPECT_FALSE(hc::evaluate_assertions(d, c).front().passed);
  const auto r = hc::evaluate_assertions(d, c, {pending}).front();
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.cases_checked, 3);
  fs::remove(db);
}

}  // namespace
