// Report rendering: every table present, Markdown aligned with units in headers, CSV per table,
// JSON parseable with the verdict; tables reject non-finite numbers.
#include "analysis/report/analysis_report.hpp"
#include "analysis/simulate/synthetic.hpp"

#include "golden_db.hpp"
#include "tests/common/small_synthetic.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

TEST(Report, SyntheticCampaignHasAllTablesAndFiles) {
  const auto path = golden::temp_db("report");
  analysis::SyntheticOptions o = test_support::small_synthetic();
  o.infra_failed_cases = 1;
  o.missing_cases = 1;
  analysis::write_synthetic_campaign(path, o);
  analysis::PrimaryOptions opt;
  opt.bootstrap = {2000, 1, 2};
  const auto r = analysis::analyze_campaign(path, opt);
  std::vector<std::string> ids;
  for (const auto& t : r.tables) ids.push_back(t.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"table1_constants", "table2_regimes", "table4_primary", "design_coverage",
                                           "absolute_differences", "table5_wake_service",
                                           "table5b_faults_context_switches", "table6_regime_medians",
                                           "mechanism", "reclaim_execution", "outcome_counts", "attempts", "mark_infra",
                                           "measurement_quality", "treatment_actions", "arm_effects",
                                           "secondary_endpoints", "arm_effects_cases"}));
  const auto& t2 = r.tables[1];
  ASSERT_EQ(t2.rows.size(), 4u);  // four regimes
  EXPECT_EQ(t2.rows[0][5], 2);    // 2 VMs
  EXPECT_EQ(t2.rows[0][6], 4);    // triplets: 2 VMs x 2 per stratum
  EXPECT_EQ(t2.rows[0][7], 12);   // cases
  // Achieved rate (synthetic outcome_json.load): 64 MiB/s x (0.97 - 0.01 (repeat mod 3)): three cases at
  // 61.44 (repeat 1) and three at 60.80 (repeat 2) in fast-random: median (61.44 + 60.80) / 2.
  EXPECT_NEAR(t2.rows[0][2].get<double>(), 61.12, 1e-9);
  EXPECT_EQ(t2.rows[0][0], "fast-random");
  const auto dir = std::filesystem::path(path).parent_path() / "report_out";
  analysis::write_report_files(r, dir.string());
  for (const auto& id : ids) EXPECT_TRUE(std::filesystem::exists(dir / (id + ".csv"))) << id;
  std::ifstream f(dir / "report.json");
  std::stringstream ss;
  ss << f.rdbuf();
  const auto j = nlohmann::json::parse(ss.str());
  EXPECT_EQ(j["extra"]["comparisons"].size(), 4u);
  EXPECT_TRUE(j["extra"]["verdict"].contains("general_benefit"));
  const std::string md = analysis::render_markdown(r);
  EXPECT_NE(md.find("timings are inflated under TCG"), std::string::npos);
  EXPECT_NE(md.find("lower (98.75%)"), std::string::npos);
  EXPECT_NE(md.find("compute p99 median (ms)"), std::string::npos);
  EXPECT_NE(md.find("**Verdict"), std::string::npos);
  // The mechanism table says the study names no owner of its PSI, and that full < some pointing
  // at a group of several tasks is a conjecture.
  EXPECT_NE(md.find("without saying of which group (bg, fg) or of the whole system"), std::string::npos) << md;
  EXPECT_NE(md.find("a conjecture, the study says none of this"), std::string::npos) << md;
  EXPECT_NE(md.find("study: PSI some, owner not stated (s)"), std::string::npos) << md;
  EXPECT_EQ(md.find("study: bg PSI"), std::string::npos) << md;
}

TEST(Report, MarkdownColumnsAlignAndCsvQuotes) {
  analysis::Table t{"t", "T", {{"name", 0}, {"value (us)", 2}}, {}, {}};
  t.add({"a, b", analysis::num(1.5)});
  t.add({"long name here", nullptr});
  analysis::Report r;
  r.title = "x";
  r.tables.push_back(t);
  const std::string md = analysis::render_markdown(r);
  EXPECT_NE(md.find("| a, b           |       1.50 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| long name here |        n/a |"), std::string::npos) << md;
  EXPECT_EQ(analysis::render_csv(t), "name,value_us\n\"a, b\",1.5\nlong name here,\n");
  EXPECT_THROW(analysis::num(std::nan("")), std::invalid_argument);
  EXPECT_THROW(t.add({"short row"}), std::invalid_argument);
}
