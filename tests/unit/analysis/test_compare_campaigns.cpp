// `harness compare DB1 DB2 [DB3 ...]` library (analysis/compare/compare_campaigns.hpp): N synthetic
// campaigns lined up, the settings that differ listed (a changed bg memory.high among them), a
// k-arm campaign beside a triplet campaign, and an A/B campaign beside a matched-block one.
#include "analysis/report/analysis_report.hpp"
#include "analysis/compare/compare_campaigns.hpp"
#include "analysis/compare/recorded_settings.hpp"
#include "analysis/compare/setting_differences.hpp"
#include "analysis/simulate/synthetic.hpp"
#include "results/db.hpp"

#include "golden_db.hpp"
#include "tests/common/small_synthetic.hpp"
#include "tests/unit/analysis/report_checks.hpp"

#include <gtest/gtest.h>

namespace {

using nlohmann::json;

/// Replaces the stored campaign YAML of the DB at `path` (campaign_meta.campaign_yaml).
void set_yaml(const std::string& path, const std::string& yaml) {
  results::Db db(path, results::Db::Mode::ReadWrite);
  results::Stmt st(db, "INSERT OR REPLACE INTO campaign_meta(key,value) VALUES('campaign_yaml',?1)");
  st.bind(1, yaml).run();
}

/// A campaign YAML naming `name` with bg memory.high `high` (the rest as the synthetic cases run).
std::string yaml_with(const std::string& name, const std::string& high) {
  return "name: " + name + "\nkind: smoke\ncgroups:\n  parent: harness\n  bg_memory_max_mib: 300\n  bg_memory_high_mib: " +
         high + "\nregimes:\n  - {name: fast-random, rate_mib_s: 64, contents: random}\nconfigurations: [static-zram, "
         "delayed-activation, bounded-reclaim]\n";
}

analysis::CompareCampaign matched(const std::string& path) {
  analysis::PrimaryOptions opt;
  opt.bootstrap = {2000, 3, 1};
  analysis::CompareCampaign c;
  c.label = path;
  c.side = analysis::side_from_report(analysis::analyze_campaign(path, opt), path);
  c.settings = analysis::recorded_settings(path);
  return c;
}

std::string synthetic(const std::string& stem, std::uint64_t seed, const analysis::SyntheticOptions& base) {
  const auto path = golden::temp_db(stem);
  auto o = base;
  o.seed = seed;
  analysis::write_synthetic_campaign(path, o);
  return path;
}

using report_checks::table;

using analysis::column_index;

/// The row of `t` whose first cell is `first`; nullptr when none.
const std::vector<json>* row(const analysis::Table& t, const std::string& first) {
  for (const auto& r : t.rows)
    if (r[0] == first) return &r;
  return nullptr;
}

}  // namespace

TEST(CompareCampaigns, LinesUpSettingsFirstAppearanceOrderAndDiffers) {
  const auto rows = analysis::line_up_settings({{{"x", "1"}, {"y", "2"}}, {{"y", "2"}, {"z", "3"}}, {{"x", "1"}, {"y", "2"}}});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].setting, "x");
  EXPECT_EQ(rows[0].values, (std::vector<std::string>{"1", analysis::kSettingNotRecorded, "1"}));
  EXPECT_TRUE(rows[0].differs);
  EXPECT_EQ(rows[1].setting, "y");
  EXPECT_FALSE(rows[1].differs);
  EXPECT_EQ(rows[2].setting, "z");
  EXPECT_TRUE(rows[2].differs);
  const auto texts = analysis::difference_texts({"A", "B", "C"}, rows);
  ASSERT_EQ(texts.size(), 2u);
  EXPECT_EQ(texts[0], "x (A 1; B not recorded; C 1)");
  EXPECT_THROW(analysis::setting_table("t", "t", {"A"}, rows), std::invalid_argument);
}

TEST(CompareCampaigns, ThreeCampaignsListTheChangedBgMemoryHigh) {
  const auto base = test_support::small_synthetic("kvm");
  const auto a = synthetic("n3a", 1, base), b = synthetic("n3b", 2, base), c = synthetic("n3c", 3, base);
  set_yaml(a, yaml_with("same", "null"));
  set_yaml(b, yaml_with("same", "null"));
  set_yaml(c, yaml_with("same", "200"));
  const auto r = analysis::compare_campaigns({matched(a), matched(b), matched(c)});
  // Named in the first paragraph (issue 59: a title that names them is too wide for a terminal).
  EXPECT_EQ(r.title, "Reclaim ablation: comparison of 3 campaigns, A the reference");
  ASSERT_FALSE(r.summary.empty());
  EXPECT_NE(r.summary.front().find("A = " + a + "; B = " + b + "; C = " + c + "; A is the reference"), std::string::npos)
      << r.summary.front();

  const auto& st = table(r, "compare_settings");
  const auto* high = row(st, "campaign YAML cgroups.bg_memory_high_mib");
  ASSERT_NE(high, nullptr) << "the changed setting is not listed";
  EXPECT_EQ((*high)[column_index(st, "a")], "null");
  EXPECT_EQ((*high)[column_index(st, "b")], "null");
  EXPECT_EQ((*high)[column_index(st, "c")], "200");
  EXPECT_EQ((*high)[column_index(st, "differs")], "yes");
  // Equal settings are not listed; every listed one differs.
  EXPECT_EQ(row(st, "campaign YAML cgroups.bg_memory_max_mib"), nullptr);
  EXPECT_EQ(row(st, "accelerator"), nullptr);
  EXPECT_EQ(row(st, "guest kernel"), nullptr);
  for (const auto& x : st.rows) EXPECT_EQ(x.back(), "yes") << x[0];
  // The campaign seeds differ too (1, 2, 3), and the YAML hash is not stored by the generator.
  ASSERT_NE(row(st, "campaign seed"), nullptr);
  EXPECT_EQ((*row(st, "campaign seed"))[column_index(st, "b")], "2");
  bool warned = false;
  for (const auto& w : r.warnings)
    warned = warned || w.find("cgroups.bg_memory_high_mib (A null; B null; C 200)") != std::string::npos;
  EXPECT_TRUE(warned) << json(r.warnings).dump();
  EXPECT_EQ(r.extra["setting_differences"].size(), st.rows.size());

  // Table 4: the study's four, each campaign's interval, C against A.
  const auto& t4 = table(r, "compare_table4");
  ASSERT_EQ(t4.rows.size(), 4u);
  for (const auto& x : t4.rows) {
    for (const char* s : {"a_ratio", "b_ratio", "c_ratio", "ratio_c_over_a", "ratio_b_over_a"})
      EXPECT_TRUE(x[column_index(t4, s)].is_number()) << s;
    EXPECT_NEAR(x[column_index(t4, "ratio_c_over_a")].get<double>(),
                x[column_index(t4, "c_ratio")].get<double>() / x[column_index(t4, "a_ratio")].get<double>(), 1e-12);
    EXPECT_TRUE(x[column_index(t4, "c_a_intervals_overlap")] == "yes" || x[column_index(t4, "c_a_intervals_overlap")] == "no");
  }
  // Mechanism medians of all three, C - A.
  const auto& m = table(r, "compare_mechanism");
  ASSERT_FALSE(m.rows.empty());
  int both = 0;
  for (const auto& x : m.rows)
    if (x[column_index(m, "a")].is_number() && x[column_index(m, "c")].is_number()) {
      ++both;
      EXPECT_NEAR(x[column_index(m, "c_minus_a")].get<double>(), x[column_index(m, "c")].get<double>() - x[column_index(m, "a")].get<double>(), 1e-9);
    }
  EXPECT_GT(both, 0);
}

TEST(CompareCampaigns, KArmBesideTriplets) {
  const auto karm = synthetic("nk", 1, test_support::five_arm_synthetic());
  const auto trip = synthetic("nt", 1, test_support::small_synthetic("kvm"));
  const auto r = analysis::compare_campaigns({matched(karm), matched(trip)});
  const auto& t4 = table(r, "compare_table4");
  // The k-arm family's five, then the triplet campaign's study comparisons it lacks.
  ASSERT_EQ(t4.rows.size(), 8u);
  const auto* senpai = row(t4, "compute: senpai / static-zram");
  ASSERT_NE(senpai, nullptr);
  EXPECT_TRUE((*senpai)[column_index(t4, "a_ratio")].is_number());
  EXPECT_TRUE((*senpai)[column_index(t4, "b_ratio")].is_null());
  EXPECT_EQ((*senpai)[column_index(t4, "b_a_intervals_overlap")], "B lacks it");
  const auto* delayed = row(t4, "compute: bounded-reclaim / delayed-activation");
  ASSERT_NE(delayed, nullptr);
  EXPECT_TRUE((*delayed)[column_index(t4, "a_ratio")].is_null());
  EXPECT_EQ((*delayed)[column_index(t4, "b_a_intervals_overlap")], "A lacks it");
  const auto& arms = table(r, "compare_arms");
  EXPECT_EQ((*row(arms, "senpai"))[column_index(arms, "b")], "not run");
  // The arms table of the k-arm DB is a setting the triplet DB does not record.
  const auto& st = table(r, "compare_settings");
  const auto* arm = row(st, "arm senpai");
  ASSERT_NE(arm, nullptr);
  EXPECT_EQ((*arm)[column_index(st, "a")].get<std::string>().rfind("policy senpai, params {\"interval_s\":6}, sha256 ", 0), 0u);
  EXPECT_EQ((*arm)[column_index(st, "b")], analysis::kSettingNotRecorded);
}

TEST(CompareCampaigns, AbCampaignBesideAMatchedBlockCampaign) {
  const auto trip = synthetic("nab-t", 1, test_support::small_synthetic("kvm"));
  const auto ab = golden::temp_db("nab-ab");
  analysis::SyntheticAbOptions o;
  o.reclaim_ratio = 1.5;
  analysis::write_synthetic_ab(ab, o);
  analysis::RegressionDesign c;
  c.file = "synthetic-ab.yaml";
  c.design = "ab-pairs";
  c.bootstrap_replicates = 2000;
  c.alpha = 0.05;
  c.tolerances = {{"reclaim_duration", 1.2, std::nullopt, 1}};
  analysis::CompareCampaign abc;
  abc.label = ab;
  abc.ab = analysis::compare_variants(ab, ab, c);
  abc.settings = analysis::recorded_settings(ab);
  const auto r = analysis::compare_campaigns({matched(trip), abc});
  // The A/B campaign has no Table 4 of its own: blanks, "B lacks it".
  const auto& t4 = table(r, "compare_table4");
  ASSERT_EQ(t4.rows.size(), 4u);
  for (const auto& x : t4.rows) {
    EXPECT_TRUE(x[column_index(t4, "b_ratio")].is_null());
    EXPECT_EQ(x[column_index(t4, "b_a_intervals_overlap")], "B lacks it");
  }
  const auto& arms = table(r, "compare_arms");
  EXPECT_EQ((*row(arms, "bounded-reclaim"))[column_index(arms, "b")], "A/B campaign (table compare_ab)");
  // Its metrics: B's reclaim_duration ratio near the true 1.5, A (matched blocks) blank.
  const auto& abt = table(r, "compare_ab");
  const auto* rd = row(abt, "reclaim_duration");
  ASSERT_NE(rd, nullptr);
  EXPECT_NEAR((*rd)[column_index(abt, "b_ratio")].get<double>(), 1.5, 0.1);
  EXPECT_EQ((*rd)[column_index(abt, "b_verdict")], "regression");
  EXPECT_TRUE((*rd)[column_index(abt, "a_ratio")].is_null());
  EXPECT_TRUE((*rd)[column_index(abt, "ratio_b_over_a")].is_null());
  EXPECT_EQ(r.extra["campaigns"][1]["kind"], "ab");
  EXPECT_THROW(analysis::compare_campaigns({abc}), std::invalid_argument);
}
