// `harness compare A B`, `harness compare --published DB` and `harness archive DB OUT.tar.zst`
// through the real executable, on synthetic campaign DBs (analysis/simulate/synthetic.hpp): what is
// reproduced of the study, a not-assessable campaign, and the pilot DB a from_pilot plan needs.
#include "analysis/simulate/synthetic.hpp"
#include "harness/campaign/commands/archive.hpp"
#include "harness/digest/sha256.hpp"
#include "results/db.hpp"
#include "tests/common/slurp.hpp"
#include "tests/common/small_synthetic.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <algorithm>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using test_support::slurp;

struct Run {
  int code = -1;
  std::string out;
};

// Runs a shell command line, capturing stdout (stderr goes to the test log).
Run sh(const std::string& cmd) {
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  return r;
}


class ReportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("hk_report_cli_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string synthetic(const std::string& name, double compute_static_ratio) {
    const auto path = (dir / (name + ".db")).string();
    analysis::SyntheticOptions o = test_support::small_synthetic("kvm");
    o.true_ratios[0] = compute_static_ratio;
    o.case_sd = o.triplet_sd = 0.001;
    analysis::write_synthetic_campaign(path, o);
    results::Db db(path, results::Db::Mode::ReadWrite);
    name_smoke_campaign(db, name,
                        {{"schedule_json", "{\"cases\":[]}"},
                         {"schedule_sha256", harness::digest::sha256_hex("{\"cases\":[]}")}});
    return path;
  }

  // A k-arm campaign (five_arm_synthetic: the study's three, senpai, bounded-loop; five declared
  // comparisons in its plan JSON), named `name`.
  std::string five_arm(const std::string& name, std::uint64_t seed) {
    const auto path = (dir / (name + ".db")).string();
    analysis::SyntheticOptions o = test_support::five_arm_synthetic();
    o.seed = seed;
    analysis::write_synthetic_campaign(path, o);
    results::Db db(path, results::Db::Mode::ReadWrite);
    name_smoke_campaign(db, name);
    return path;
  }

  // Names the synthetic campaign in `db` `name`, kind smoke, with a campaign YAML of B = 2000,
  // and sets the campaign_meta keys in `more`.
  static void name_smoke_campaign(results::Db& db, const std::string& name,
                                  const std::vector<std::pair<std::string, std::string>>& more = {}) {
    results::Stmt st(db, "INSERT OR REPLACE INTO campaign_meta(key,value) VALUES(?1,?2)");
    st.bind(1, "name").bind(2, name).run();
    st.bind(1, "kind").bind(2, "smoke").run();
    st.bind(1, "campaign_yaml").bind(2, "name: " + name + "\nkind: smoke\nanalysis: {bootstrap_replicates: 2000}\n").run();
    for (const auto& [k, v] : more) st.bind(1, k).bind(2, v).run();
  }

  const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
  fs::path dir;
};

}  // namespace

TEST_F(ReportCli, CompareTwoCampaigns) {
  const auto a = synthetic("camp-a", 0.9), b = synthetic("camp-b", 1.2);
  const auto r = sh(harness + " compare " + a + " " + b + " --format json --out " + (dir / "cmp").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["tables"][0]["id"], "compare_table4");
  const auto& rows = j["tables"][0]["rows"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0][0], "compute: bounded-reclaim / static-zram");
  // True ratios 0.9 vs 1.2 with tiny noise: B / A near 4/3, intervals apart.
  EXPECT_NEAR(rows[0][9].get<double>(), 1.2 / 0.9, 0.05);
  EXPECT_EQ(rows[0][11], "no");
  EXPECT_EQ(j["provenance"]["campaign_name"], "camp-a");
  EXPECT_NE(j["provenance"]["command_line"].get<std::string>().find("compare"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "cmp" / "compare_table4.csv.meta.json"));
  EXPECT_TRUE(fs::exists(dir / "cmp" / "report.html"));
  EXPECT_NE(slurp(dir / "cmp" / "compare_table4.csv").find("a_ratio,a_ratio_lower"), std::string::npos);
}

namespace {
/// The row of table `id` whose first cell is `first` (and second cell `second` when given).
nlohmann::json row_of(const nlohmann::json& report, const std::string& id, const std::string& first,
                      const std::string& second = "") {
  for (const auto& t : report["tables"])
    if (t["id"] == id)
      for (const auto& r : t["rows"])
        if (r[0] == first && (second.empty() || r[1] == second)) return r;
  return nullptr;
}
nlohmann::json column_names(const nlohmann::json& report, const std::string& id) {
  for (const auto& t : report["tables"])
    if (t["id"] == id) return t["column_names"];
  return nullptr;
}
}  // namespace

namespace {
const std::vector<std::string> kFiveArms{"static-zram", "delayed-activation", "bounded-reclaim", "senpai",
                                         "bounded-loop"};
const std::vector<std::string> kFiveLabels{"compute: senpai / static-zram", "sqlite: senpai / static-zram",
                                           "compute: bounded-loop / bounded-reclaim",
                                           "sqlite: bounded-reclaim / static-zram",
                                           "compute: delayed-activation / senpai"};
/// Column `j` of every row of table `id`.
std::vector<nlohmann::json> column_of(const nlohmann::json& report, const std::string& id, std::size_t j) {
  std::vector<nlohmann::json> v;
  for (const auto& t : report["tables"])
    if (t["id"] == id)
      for (const auto& r : t["rows"]) v.push_back(r[j]);
  return v;
}
std::vector<nlohmann::json> texts(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }
}  // namespace

// Two k-arm campaigns: every declared comparison and every arm of both, side by side.
TEST_F(ReportCli, CompareTwoKArmCampaignsShowsEveryArmAndComparison) {
  const auto a = five_arm("karm-a", 1), b = five_arm("karm-b", 2);
  const auto r = sh(harness + " compare " + a + " " + b + " --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(column_of(j, "compare_table4", 0), texts(kFiveLabels));
  EXPECT_EQ(column_names(j, "compare_table4")[1], "a_triplets");  // the CSV name stays; the header says blocks
  for (const auto& t : j["tables"]) {
    if (t["id"] == "compare_table4") {
      EXPECT_EQ(t["columns"][1], "A blocks") << t["columns"].dump();
    }
  }
  for (const auto& x : column_of(j, "compare_table4", 11)) EXPECT_TRUE(x == "yes" || x == "no") << x;
  EXPECT_EQ(column_of(j, "compare_arms", 0), texts(kFiveArms));
  for (std::size_t c : {1, 2})
    for (const auto& x : column_of(j, "compare_arms", c)) EXPECT_EQ(x, "yes");
  EXPECT_EQ(row_of(j, "compare_arms", "senpai")[3], "policy senpai, params {\"interval_s\":6}");
  std::set<std::string> mech;
  for (const auto& x : column_of(j, "compare_mechanism", 0)) mech.insert(x.get<std::string>());
  EXPECT_EQ(mech, std::set<std::string>(kFiveArms.begin(), kFiveArms.end()));
}

// Three campaigns, the third with another bg memory.high in its stored YAML: every campaign's
// Table 4 side by side, and the changed setting listed (the table and a warning), not `warnings: []`.
TEST_F(ReportCli, CompareThreeCampaignsListsTheChangedSetting) {
  const auto a = synthetic("camp-1", 0.9), b = synthetic("camp-2", 0.9), c = synthetic("camp-3", 0.9);
  {
    results::Db db(c, results::Db::Mode::ReadWrite);
    name_smoke_campaign(db, "camp-3",
                        {{"campaign_yaml", "name: camp-3\nkind: smoke\nanalysis: {bootstrap_replicates: 2000}\n"
                                           "cgroups: {bg_memory_high_mib: 200}\n"}});
  }
  const auto r = sh(harness + " compare " + a + " " + b + " " + c + " --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(column_of(j, "compare_table4", 0).size(), 4u);
  for (const char* name : {"a_ratio", "b_ratio", "c_ratio", "ratio_c_over_a"}) {
    const auto names = column_names(j, "compare_table4");
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  const auto high = row_of(j, "compare_settings", "campaign YAML cgroups.bg_memory_high_mib");
  ASSERT_FALSE(high.is_null()) << r.out;
  EXPECT_EQ(high[1], "not recorded");
  EXPECT_EQ(high[2], "not recorded");
  EXPECT_EQ(high[3], "200");
  EXPECT_EQ(high[4], "yes");
  EXPECT_FALSE(row_of(j, "compare_settings", "campaign name").is_null());  // camp-1, camp-2, camp-3
  EXPECT_TRUE(row_of(j, "compare_settings", "campaign kind").is_null());   // smoke in all three
  bool warned = false;
  for (const auto& w : j["warnings"])
    warned = warned || w.get<std::string>().find("campaign YAML cgroups.bg_memory_high_mib (A not recorded; B not "
                                                 "recorded; C 200)") != std::string::npos;
  EXPECT_TRUE(warned) << j["warnings"].dump();
  // The Markdown names all three campaigns (in its first paragraph: the title fits a terminal, issue
  // 59; the paragraph is wrapped, so read with its line breaks as spaces).
  auto md = sh(harness + " compare " + a + " " + b + " " + c);
  std::replace(md.out.begin(), md.out.end(), '\n', ' ');
  EXPECT_NE(md.out.find("C = " + c), std::string::npos);
  EXPECT_NE(md.out.find("Settings that differ"), std::string::npos);
}

// A k-arm campaign beside the study's three: the arms and comparisons only one side has are
// shown as such, not dropped.
TEST_F(ReportCli, CompareKArmWithThreeArmCampaignNamesWhatOnlyOneSideHas) {
  const auto a = five_arm("karm", 1), b = synthetic("three", 0.9);
  const auto r = sh(harness + " compare " + a + " " + b + " --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  auto labels = texts(kFiveLabels);  // A's five, then B's study comparisons A lacks
  for (const char* l : {"compute: bounded-reclaim / static-zram", "compute: bounded-reclaim / delayed-activation",
                        "sqlite: bounded-reclaim / delayed-activation"})
    labels.push_back(l);
  EXPECT_EQ(column_of(j, "compare_table4", 0), labels);
  EXPECT_EQ(row_of(j, "compare_table4", "compute: senpai / static-zram")[11], "B lacks it");
  EXPECT_EQ(row_of(j, "compare_table4", "compute: bounded-reclaim / delayed-activation")[11], "A lacks it");
  EXPECT_NE(row_of(j, "compare_table4", "sqlite: bounded-reclaim / static-zram")[11], "B lacks it");  // both have it
  EXPECT_EQ(column_of(j, "compare_arms", 0), texts(kFiveArms));
  EXPECT_EQ(row_of(j, "compare_arms", "senpai")[1], "yes");
  EXPECT_EQ(row_of(j, "compare_arms", "senpai")[2], "not run");
  EXPECT_EQ(row_of(j, "compare_arms", "bounded-loop")[2], "not run");
  EXPECT_EQ(row_of(j, "compare_arms", "static-zram")[2], "yes");
  EXPECT_FALSE(row_of(j, "compare_mechanism", "senpai").is_null());
  // The other way round: B's extra arms are named from A's side.
  const auto back = nlohmann::json::parse(sh(harness + " compare " + b + " " + a + " --format json").out);
  EXPECT_EQ(row_of(back, "compare_arms", "bounded-loop")[1], "not run");
  EXPECT_EQ(row_of(back, "compare_arms", "bounded-loop")[2], "yes");
}

// --published on a k-arm campaign: the study's findings judged on the study's arms; the other arms
// and comparisons listed as not part of the study.
TEST_F(ReportCli, CompareWithPublishedListsTheArmsNotInTheStudy) {
  const auto a = five_arm("karm-pub", 1);
  const auto r = sh(harness + " compare --published " + a + " --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(column_of(j, "published_arms", 0), texts(kFiveArms));
  for (const char* arm : {"senpai", "bounded-loop"}) {
    EXPECT_EQ(row_of(j, "published_arms", arm)[1], "not part of the study") << arm;
    EXPECT_EQ(row_of(j, "published_arms", arm)[2], "yes") << arm;
  }
  for (const char* arm : {"static-zram", "delayed-activation", "bounded-reclaim"})
    EXPECT_EQ(row_of(j, "published_arms", arm)[1], "yes") << arm;
  const auto names = column_names(j, "published_table4");
  auto at = [&](const nlohmann::json& row, const std::string& name) {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return row[i];
    ADD_FAILURE() << "no column " << name;
    return nlohmann::json();
  };
  // The one study comparison the family declares is judged; the study's others are not in it.
  const auto ss = row_of(j, "published_table4", "sqlite: bounded-reclaim / static-zram");
  EXPECT_EQ(at(ss, "study_finding"), "contains 1 (no clear difference)");
  EXPECT_TRUE(at(ss, "this_ratio").is_number());
  EXPECT_EQ(at(row_of(j, "published_table4", "compute: bounded-reclaim / static-zram"), "this_finding"),
            "not in this campaign");
  // The others: listed, not judged.
  for (const char* l : {"compute: senpai / static-zram", "sqlite: senpai / static-zram",
                        "compute: bounded-loop / bounded-reclaim", "compute: delayed-activation / senpai"}) {
    const auto row = row_of(j, "published_table4", l);
    ASSERT_FALSE(row.is_null()) << l;
    EXPECT_EQ(at(row, "study_finding"), "not part of the study") << l;
    EXPECT_EQ(at(row, "finding_reproduced"), "not part of the study") << l;
    EXPECT_TRUE(at(row, "this_ratio").is_number()) << l;
    // A ratio below 1 favours that comparison's own treatment, never "bounded reclaim".
    EXPECT_EQ(at(row, "this_finding").get<std::string>().find("bounded reclaim"), std::string::npos) << l;
  }
  EXPECT_EQ(row_of(j, "published_setting", "matched triplets")[2], "16 blocks of 5 arms (80 cases)");
  EXPECT_EQ(row_of(j, "published_setting", "matched triplets")[3], "yes");
}

TEST_F(ReportCli, CompareWithPublishedSaysWhatIsReproduced) {
  // True ratios: the study's estimates, nearly noiseless. compute/static 0.938 stays below 1
  // (the study's finding, reproduced); sqlite/static 0.993 gets an interval wholly below 1,
  // where the study's contains 1: not reproduced. The all-four rule: no general benefit in
  // both (0.993 > 0.95), no harm: the same verdict.
  const auto a = synthetic("camp-p", 0.938);
  const auto r = sh(harness + " compare --published " + a + " --format json --out " + (dir / "pub").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const auto cs = row_of(j, "published_table4", "compute: bounded-reclaim / static-zram");
  ASSERT_FALSE(cs.is_null()) << r.out;
  const auto names = column_names(j, "published_table4");
  auto at = [&](const nlohmann::json& row, const std::string& name) {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return row[i];
    ADD_FAILURE() << "no column " << name;
    return nlohmann::json();
  };
  EXPECT_EQ(at(cs, "study_ratio"), 0.938);
  EXPECT_EQ(at(cs, "study_ratio_lower"), 0.906);
  EXPECT_EQ(at(cs, "study_finding"), "below 1 (favours bounded reclaim)");
  EXPECT_EQ(at(cs, "this_finding"), "below 1 (favours bounded reclaim)");
  EXPECT_EQ(at(cs, "finding_reproduced"), "yes");
  EXPECT_NEAR(at(cs, "ratio_this_over_study").get<double>(), 1.0, 0.02);
  const auto ss = row_of(j, "published_table4", "sqlite: bounded-reclaim / static-zram");
  EXPECT_EQ(at(ss, "study_finding"), "contains 1 (no clear difference)");
  EXPECT_EQ(at(ss, "this_finding"), "below 1 (favours bounded reclaim)");
  EXPECT_EQ(at(ss, "finding_reproduced"), "no");
  EXPECT_EQ(at(ss, "same_direction"), "yes");
  EXPECT_EQ(j["extra"]["reproduced"][2]["reproduced"], false);
  EXPECT_EQ(j["extra"]["reproduced"][0]["reproduced"], true);
  // No "B / A": every comparison column names its side.
  for (const auto& n : names) EXPECT_EQ(n.get<std::string>().find("_b_"), std::string::npos) << n;
  const auto rule = row_of(j, "published_rule", "general benefit iff all four upper bounds < 1 and all four estimates "
                                                "<= 0.95; harm iff a lower bound > 1");
  ASSERT_FALSE(rule.is_null());
  EXPECT_EQ(rule[1], "no general responsiveness benefit, no harm detected");
  EXPECT_EQ(rule[2], "no general responsiveness benefit, no harm detected");
  EXPECT_EQ(rule[3], "yes");
  EXPECT_EQ(j["extra"]["rule_same_verdict"], true);
  // Every difference from the study's setting is listed (2 VMs, 16 triplets, 2/5/2 s phases).
  EXPECT_EQ(row_of(j, "published_setting", "VMs")[3], "yes");
  EXPECT_EQ(row_of(j, "published_setting", "VMs")[2], "2");
  EXPECT_EQ(row_of(j, "published_setting", "phases warmup / pressure / recovery")[2], "2 / 5 / 2 s");
  EXPECT_EQ(row_of(j, "published_setting", "matched triplets")[2], "16");
  EXPECT_EQ(row_of(j, "published_setting", "canary period")[3], "no");
  EXPECT_EQ(row_of(j, "published_setting", "accelerator")[2], "kvm");
  EXPECT_EQ(row_of(j, "published_setting", "accelerator")[3], "no");
  EXPECT_EQ(row_of(j, "published_setting", "bounded-reclaim dose")[3], "no");
  bool listed = false;
  for (const auto& w : j["warnings"]) listed = listed || w.get<std::string>().find("differs from the study's setting in") != std::string::npos;
  EXPECT_TRUE(listed) << j["warnings"].dump();
  // Tables 5 and 6: the study's statements, checked, and this campaign's tables beside them.
  EXPECT_FALSE(row_of(j, "published_table5", "Delayed activation's larger response times coincided with larger "
                                             "wake-delay medians", "compute").is_null());
  EXPECT_FALSE(row_of(j, "published_table6", "Delayed activation had the highest median p99 in every regime",
                      "sqlite").is_null());
  EXPECT_FALSE(row_of(j, "table5_wake_service", "static-zram", "compute").is_null());
  EXPECT_FALSE(row_of(j, "table6_regime_medians", "fast-random", "bounded-reclaim").is_null());
  // Mechanism medians name their sides too.
  EXPECT_EQ(column_names(j, "compare_mechanism")[2], "study");
  EXPECT_EQ(column_names(j, "compare_mechanism")[3], "this_campaign");
  EXPECT_TRUE(fs::exists(dir / "pub" / "published_table4.csv"));
  // The study's PSI stall (owner not stated) beside this campaign's bg, fg and system medians,
  // in every output.
  EXPECT_EQ(column_names(j, "published_stall"),
            nlohmann::json({"configuration", "state", "study_s", "bg_s", "fg_s", "system_s"}));
  const auto st = row_of(j, "published_stall", "static-zram", "full");
  ASSERT_FALSE(st.is_null());
  EXPECT_EQ(st[2], 1.73);
  for (int k = 3; k < 6; ++k) EXPECT_TRUE(st[k].is_number()) << st.dump();
  EXPECT_TRUE(fs::exists(dir / "pub" / "published_stall.csv"));
  const std::string html = slurp(dir / "pub" / "report.html");
  EXPECT_NE(html.find("study (s), owner not stated"), std::string::npos);
  EXPECT_NE(html.find("this campaign system (s)"), std::string::npos);
  // Markdown: the words a reader sees.
  const auto md = sh(harness + " compare --published " + a);
  EXPECT_NE(md.out.find("finding reproduced"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("primary comparisons reproduce the study's finding"), std::string::npos) << md.out;
  // Wrong arity: a usage/could-not-run error, not a comparison.
  EXPECT_EQ(sh(harness + " compare " + a + " 2>/dev/null").code, 64);  // a usage error (harness/cli/exit_codes.hpp)
  EXPECT_EQ(sh(harness + " compare --published " + a + " " + a + " 2>/dev/null").code, 64);
}

TEST_F(ReportCli, CompareWithPublishedQualifiesANotAssessableCampaign) {
  // One triplet per stratum, TCG: zero-width intervals. Nothing is "reproduced" and no
  // overlap is claimed.
  const auto path = (dir / "one.db").string();
  analysis::SyntheticOptions o = test_support::small_synthetic("tcg");
  o.triplets_per_stratum = 1;
  analysis::write_synthetic_campaign(path, o);
  const auto r = sh(harness + " compare --published " + path + " --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j["warnings"].size(), 2u);
  // First the banner of a synthetic DB (issue 59), then why nothing is judged.
  EXPECT_EQ(j["warnings"][0].get<std::string>().rfind("SYNTHETIC DATA", 0), 0u) << j["warnings"].dump();
  EXPECT_NE(j["warnings"][1].get<std::string>().find("NOT ASSESSABLE"), std::string::npos) << j["warnings"].dump();
  bool tcg = false;
  for (const auto& w : j["warnings"]) tcg = tcg || w.get<std::string>().find("TCG") != std::string::npos;
  EXPECT_TRUE(tcg);
  EXPECT_EQ(j["extra"]["assessable"], false);
  for (const auto& x : j["extra"]["reproduced"]) EXPECT_TRUE(x["reproduced"].is_null()) << x.dump();
  EXPECT_TRUE(j["extra"]["rule_same_verdict"].is_null());
  const auto cs = row_of(j, "published_table4", "compute: bounded-reclaim / static-zram");
  EXPECT_EQ(cs[9], "not assessable");
  EXPECT_EQ(cs[12], "not assessable (zero-width interval)");
  EXPECT_EQ(cs[13], "not assessable");
  EXPECT_EQ(row_of(j, "published_setting", "accelerator")[3], "yes");
}

TEST_F(ReportCli, ArchiveBundlesEverything) {
  // A missing tool fails (tests/README.md: a precondition is never a skip).
  ASSERT_EQ(sh("command -v tar >/dev/null && command -v zstd >/dev/null").code, 0)
      << "tar or zstd missing (harness/scripts/install-deps.sh installs them)";
  const auto a = synthetic("camp-x", 0.9);
  const auto out = (dir / "x.tar.zst").string();
  const auto r = sh(harness + " archive " + a + " " + out + " --no-figures");
  ASSERT_EQ(r.code, 0) << r.out;
  ASSERT_TRUE(fs::exists(out));
  const auto x = dir / "extract";
  fs::create_directories(x);
  ASSERT_EQ(sh("tar --zstd -xf " + out + " -C " + x.string()).code, 0);
  const auto top = x / "camp-x-archive";
  for (const char* f : {"campaign.db", "campaign.yaml", "plan.json", "plan.sha256", "build.json", "MANIFEST.sha256",
                        "report/report.md", "report/report.html", "report/report.json", "report/table4_primary.csv",
                        "report/table4_primary.csv.meta.json"})
    EXPECT_TRUE(fs::exists(top / f)) << f;
  EXPECT_EQ(slurp(top / "campaign.yaml"), "name: camp-x\nkind: smoke\nanalysis: {bootstrap_replicates: 2000}\n");
  EXPECT_EQ(slurp(top / "plan.sha256"), harness::digest::sha256_hex("{\"cases\":[]}") + "\n");
  // plan.json is the hashed bytes: its SHA-256 is the stored preregistration hash.
  EXPECT_EQ(harness::digest::sha256_file((top / "plan.json").string()) + "\n", slurp(top / "plan.sha256"));
  const auto b = nlohmann::json::parse(slurp(top / "build.json"));
  EXPECT_EQ(b["campaign_name"], "camp-x");
  EXPECT_TRUE(b.contains("source_commit"));
  // The manifest verifies, and the copied DB holds every case of the original.
  EXPECT_EQ(sh("cd " + top.string() + " && sha256sum -c --quiet MANIFEST.sha256").code, 0);
  {
    results::Db orig(a, results::Db::Mode::ReadOnly), copy((top / "campaign.db").string(), results::Db::Mode::ReadOnly);
    results::Stmt q1(orig, "SELECT count(*) FROM canary_requests"), q2(copy, "SELECT count(*) FROM canary_requests");
    ASSERT_TRUE(q1.step() && q2.step());
    EXPECT_GT(q1.int64(0), 0);
    EXPECT_EQ(q1.int64(0), q2.int64(0));
  }
  // A name without .tar.zst is refused, and nothing is written.
  EXPECT_EQ(sh(harness + " archive " + a + " " + (dir / "y.tar").string() + " 2>/dev/null").code, 2);
  EXPECT_FALSE(fs::exists(dir / "y.tar"));
}

TEST_F(ReportCli, ArchiveOfAFromPilotPlanHoldsThePilotDbAndChecksIt) {
  // A precondition CI always meets (harness/scripts/test.sh runs install-deps.sh first): a
  // machine without the tools fails here, saying which, rather than passing untested.
  ASSERT_EQ(sh("command -v tar >/dev/null && command -v zstd >/dev/null && command -v sha256sum >/dev/null").code, 0)
      << "tar, zstd or sha256sum missing (harness/scripts/install-deps.sh installs them)";
  // The pilot DB (16..96 MiB all eligible) and a confirmatory campaign DB whose stored plan
  // took its dose from it, as `harness plan` stores it.
  fs::create_directories(dir / "out/pilot");
  fs::create_directories(dir / "campaigns");
  const auto pilot = (dir / "out/pilot/campaign.db").string();
  analysis::write_synthetic_pilot(pilot, {{16LL << 20}, {32LL << 20}, {64LL << 20}, {96LL << 20}});
  const std::string pilot_sha = harness::digest::sha256_file(pilot);
  const auto a = synthetic("camp-f", 0.9);
  std::string yaml = slurp(std::string(HARNESS_SOURCE_DIR) + "/campaigns/confirmatory.yaml");
  const std::string fixed = "  dose_mib: 96\n";
  ASSERT_NE(yaml.find(fixed), std::string::npos);
  yaml.replace(yaml.find(fixed), fixed.size(), "  dose_mib: {from_pilot: ../out/pilot/campaign.db}\n");
  yaml.replace(yaml.find("bootstrap_replicates: 10000"), std::string("bootstrap_replicates: 10000").size(),
               "bootstrap_replicates: 2000");
  const std::string plan = "{\"cases\":[],\"dose_from_pilot\":{\"dose_bytes\":100663296,\"pilot_db_sha256\":\"" +
                           pilot_sha + "\"}}";
  {
    results::Db db(a, results::Db::Mode::ReadWrite);
    results::Stmt st(db, "INSERT OR REPLACE INTO campaign_meta(key,value) VALUES(?1,?2)");
    st.bind(1, "campaign_yaml").bind(2, yaml).run();
    st.bind(1, "campaign_file").bind(2, (dir / "campaigns/confirmatory.yaml").string()).run();
    st.bind(1, "schedule_json").bind(2, plan).run();
    st.bind(1, "schedule_sha256").bind(2, harness::digest::sha256_hex(plan)).run();
  }
  const auto out = (dir / "f.tar.zst").string();
  const auto r = sh(harness + " archive " + a + " " + out + " --no-figures");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("its SHA-256 equals the plan's"), std::string::npos) << r.out;
  const auto x = dir / "extract";
  fs::create_directories(x);
  ASSERT_EQ(sh("tar --zstd -xf " + out + " -C " + x.string()).code, 0);
  const auto top = x / "camp-f-archive";
  for (const char* f : {"pilot/campaign.db", "pilot/pilot.sha256", "pilot/README.txt", "pilot/report/report.md",
                        "pilot/report/report.json", "campaign.as-planned.yaml"})
    EXPECT_TRUE(fs::exists(top / f)) << f;
  // The pilot DB is the one the plan preregistered, checked inside the archive.
  EXPECT_EQ(slurp(top / "pilot/pilot.sha256"), pilot_sha + "  pilot/campaign.db\n");
  EXPECT_EQ(sh("cd " + top.string() + " && sha256sum -c --quiet pilot/pilot.sha256").code, 0);
  EXPECT_EQ(sh("cd " + top.string() + " && sha256sum -c --quiet MANIFEST.sha256").code, 0);
  EXPECT_NE(slurp(top / "MANIFEST.sha256").find("  pilot/campaign.db\n"), std::string::npos);
  // Where the dose came from, and how to check it.
  const std::string readme = "The bounded-reclaim dose of this campaign (96 MiB) was chosen at plan time by the pilot "
                             "rule from the pilot DB\n" + pilot + " (archived here as pilot/campaign.db).\n\n"
                             "Check it, from the archive's top folder:\n";
  EXPECT_EQ(slurp(top / "pilot/README.txt").rfind(readme, 0), 0u) << slurp(top / "pilot/README.txt");
  // Table 3 of that pilot DB.
  EXPECT_NE(slurp(top / "pilot/report/report.md").find("Table 3"), std::string::npos);
  // The archived campaign file points at the archived pilot DB; the planned one is kept as it was.
  EXPECT_EQ(slurp(top / "campaign.as-planned.yaml"), yaml);
  const auto archived_yaml = slurp(top / "campaign.yaml");
  EXPECT_NE(archived_yaml.find("  dose_mib: {from_pilot: pilot/campaign.db}\n"), std::string::npos) << archived_yaml;
  // (The campaign's comment quoting the example path stays: only the key is rewritten.)
  EXPECT_EQ(archived_yaml.find("\n  dose_mib: {from_pilot: ../out/pilot/campaign.db}"), std::string::npos)
      << archived_yaml;

  // The pilot DB changed after planning: archived with a warning, and the check fails.
  {
    results::Db db(pilot, results::Db::Mode::ReadWrite);
    db.exec("INSERT OR REPLACE INTO campaign_meta(key,value) VALUES('touched','after planning')");
  }
  ASSERT_NE(harness::digest::sha256_file(pilot), pilot_sha);
  const auto out2 = (dir / "g.tar.zst").string();
  const auto r2 = sh(harness + " archive " + a + " " + out2 + " --no-figures");
  ASSERT_EQ(r2.code, 0) << r2.out;
  EXPECT_NE(r2.out.find("it changed after planning; pilot/pilot.sha256 fails"), std::string::npos) << r2.out;
  const auto x2 = dir / "extract2";
  fs::create_directories(x2);
  ASSERT_EQ(sh("tar --zstd -xf " + out2 + " -C " + x2.string()).code, 0);
  EXPECT_NE(sh("cd " + (x2 / "camp-f-archive").string() + " && sha256sum -c --quiet pilot/pilot.sha256 2>/dev/null").code, 0);
}

// write_archive itself on a DB without a plan or campaign file: each absent campaign_meta key
// becomes a placeholder file and a note, in order; no report folder is a note; the files are
// listed in the order the archive writes them, the manifest last, and the manifest covers the
// others.
TEST_F(ReportCli, ArchiveOfABareDbListsItsFilesAndWhatIsMissing) {
  ASSERT_EQ(sh("command -v tar >/dev/null && command -v zstd >/dev/null").code, 0)
      << "tar or zstd missing (harness/scripts/install-deps.sh installs them)";
  const auto db_path = (dir / "bare.db").string();
  { results::Db db(db_path, results::Db::Mode::Create); }
  results::Provenance prov;
  prov.campaign_name = "bare";
  const auto out = (dir / "bare.tar.zst").string();
  const auto r = harness::campaign::write_archive(db_path, out, "", prov, "");
  EXPECT_EQ(r.top, "bare-archive");
  EXPECT_EQ(r.files, (std::vector<std::string>{"campaign.db", "campaign.yaml", "plan.json", "plan.sha256", "build.json",
                                               "MANIFEST.sha256"}));
  EXPECT_EQ(r.notes, (std::vector<std::string>{"campaign_meta.campaign_yaml is not in the DB: campaign.yaml says so",
                                               "campaign_meta.schedule_json is not in the DB: plan.json says so",
                                               "campaign_meta.schedule_sha256 is not in the DB: plan.sha256 says so",
                                               "no report folder included"}));
  const auto x = dir / "extract-bare";
  fs::create_directories(x);
  ASSERT_EQ(sh("tar --zstd -xf " + out + " -C " + x.string()).code, 0);
  const auto top = x / "bare-archive";
  EXPECT_EQ(slurp(top / "plan.json"), "# not recorded: campaign_meta.schedule_json is absent from " + db_path + "\n");
  const auto manifest = slurp(top / "MANIFEST.sha256");
  EXPECT_EQ(std::count(manifest.begin(), manifest.end(), '\n'), 5) << manifest;
  EXPECT_EQ(manifest.rfind("  build.json\n"), manifest.size() - std::string("  build.json\n").size()) << manifest;
  EXPECT_EQ(sh("cd " + top.string() + " && sha256sum -c --quiet MANIFEST.sha256").code, 0);
  EXPECT_FALSE(fs::exists(out + ".partial"));
}

TEST(ArchiveYaml, FromPilotIsRewrittenOutsideCommentsOnly) {
  EXPECT_EQ(harness::campaign::rewrite_from_pilot("design:\n  dose_mib: {from_pilot: ../p.db}\n", "pilot/campaign.db"),
            "design:\n  dose_mib: {from_pilot: pilot/campaign.db}\n");
  EXPECT_EQ(harness::campaign::rewrite_from_pilot("  dose_mib:\n    from_pilot: \"/abs/p q.db\"  # the pilot\n", "x.db"),
            "  dose_mib:\n    from_pilot: x.db  # the pilot\n");
  const std::string comment = "  # dose_mib: {from_pilot: ../out/pilot/campaign.db}\n  dose_mib: 96\n";
  EXPECT_EQ(harness::campaign::rewrite_from_pilot(comment, "x.db"), comment);
  EXPECT_EQ(harness::campaign::rewrite_from_pilot("a: 1", "x.db"), "a: 1");
}

// ---- issue 59 ---------------------------------------------------------------------------------

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

/// Makes a synthetic DB read as a real run's: a harness commit on its cases, no generator mark.
void as_if_real(const std::string& path) {
  results::Db db(path, results::Db::Mode::ReadWrite);
  results::Stmt(db, "UPDATE cases SET source_commit = '" + std::string(40, 'a') + "'").run();
  results::Stmt(db, "DELETE FROM campaign_meta WHERE key = 'synthetic'").run();
}

/// The lines of `text` wider than `width` characters, each with its width.
std::string lines_wider_than(const std::string& text, std::size_t width) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    if (end - start > width) out += std::to_string(end - start) + ": " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace

// Item 4: every report of a synthetic DB (analyze's report.md, .html and .json, its stdout in
// each format, pilot-select's, compare's) says SYNTHETIC on its first line; the same cases marked
// as a real run's say nothing of it.
TEST_F(ReportCli, ASyntheticDbSaysSoOnTheFirstLineOfEveryReport) {
  const auto a = synthetic("camp-a", 0.9);
  const auto out = (dir / "rep").string();
  const auto md = sh(harness + " analyze " + a + " --no-figures --out " + out);
  ASSERT_EQ(md.code, 0) << md.out;
  EXPECT_NE(first_line(md.out).find("SYNTHETIC DATA"), std::string::npos) << first_line(md.out);
  for (const char* f : {"report.md", "report.html", "report.json"})
    EXPECT_NE(first_line(slurp(dir / "rep" / f)).find("SYNTHETIC DATA"), std::string::npos) << f;
  EXPECT_NE(slurp(dir / "rep" / "report.md").find("- Cases: none ran (a synthetic DB)"), std::string::npos);
  const auto j = nlohmann::json::parse(slurp(dir / "rep" / "report.json"));
  EXPECT_EQ(j["provenance"]["synthetic"], true);
  EXPECT_NE(j["synthetic"].get<std::string>().find("not from cases that ran"), std::string::npos);
  for (const char* format : {"json", "csv"}) {
    const auto r = sh(harness + " analyze " + a + " --no-figures --format " + format);
    EXPECT_NE(first_line(r.out).find("SYNTHETIC DATA"), std::string::npos) << format << ": " << first_line(r.out);
  }
  const auto b = synthetic("camp-b", 1.2);
  as_if_real(b);
  const auto cmp = sh(harness + " compare " + b + " " + a);
  EXPECT_NE(first_line(cmp.out).find("SYNTHETIC DATA"), std::string::npos) << first_line(cmp.out);
  EXPECT_NE(cmp.out.find("Synthetic DB(s), no case ran: B (" + a + ")"), std::string::npos);
  const auto real = sh(harness + " analyze " + b + " --no-figures --out " + (dir / "real").string());
  ASSERT_EQ(real.code, 0) << real.out;
  for (const char* f : {"report.md", "report.html", "report.json"})
    EXPECT_EQ(slurp(dir / "real" / f).find("SYNTHETIC"), std::string::npos) << f;
  EXPECT_EQ(sh(harness + " compare " + b + " " + b).out.find("SYNTHETIC"), std::string::npos);
  const auto p = (dir / "p.db").string();
  analysis::write_synthetic_pilot(p, {{16 << 20, 0.2, 1.0}, {96 << 20, 0.5, 0.9}}, 1, 20,
                                  slurp(fs::path(HARNESS_SOURCE_DIR) / "campaigns" / "pilot.yaml"));
  const auto pilot = sh(harness + " pilot-select " + p);
  EXPECT_NE(first_line(pilot.out).find("SYNTHETIC DATA"), std::string::npos) << pilot.out;
}

// Item 6: `harness compare` Markdown within 120 columns (before: 23 columns, lines of over 1,200
// characters for three campaigns): Table 4 and the arms as one small table per comparison and
// arm, prose wrapped; the CSV and JSON tables keep their columns.
TEST_F(ReportCli, CompareMarkdownFitsATerminal) {
  const auto a = five_arm("karm-a", 1), b = five_arm("karm-b", 2), c = synthetic("three", 0.9);
  {
    results::Db db(b, results::Db::Mode::ReadWrite);
    name_smoke_campaign(db, "karm-b",
                        {{"campaign_yaml", "name: karm-b\nkind: smoke\nanalysis: {bootstrap_replicates: 2000}\n"
                                           "cgroups: {bg_memory_high_mib: 200}\n"}});
  }
  const auto md = sh(harness + " compare " + a + " " + b + " " + c + " --out " + (dir / "cmp").string());
  ASSERT_EQ(md.code, 0) << md.out;
  EXPECT_EQ(lines_wider_than(md.out, 120), "") << md.out;
  EXPECT_EQ(lines_wider_than(slurp(dir / "cmp" / "report.md"), 120), "");
  EXPECT_NE(md.out.find("**compute: senpai / static-zram**\n\n| side |"), std::string::npos) << md.out;
  std::string flat = md.out;  // the sides are named, if not in the title: in a wrapped paragraph
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  EXPECT_NE(flat.find("C = " + c), std::string::npos);
  // The machine-readable table is as before: one row per comparison, every side's columns.
  const auto j = nlohmann::json::parse(sh(harness + " compare " + a + " " + b + " " + c + " --format json").out);
  EXPECT_EQ(column_names(j, "compare_table4").size(), 1u + 3u * 4u + 2u * 5u);
  const auto pub = sh(harness + " compare --published " + a);
  ASSERT_EQ(pub.code, 0) << pub.out;
  EXPECT_EQ(lines_wider_than(pub.out, 120), "") << pub.out;
}
