// `harness compare A B`, `harness compare --published DB` and `harness archive DB OUT.tar.zst`
// through the real executable, on synthetic campaign DBs (analysis/synthetic.hpp).
#include "analysis/synthetic.hpp"
#include "harness/digest/sha256.hpp"
#include "results/db.hpp"
#include "tests/common/slurp.hpp"
#include "tests/common/small_synthetic.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
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
    results::Stmt st(db, "INSERT OR REPLACE INTO campaign_meta(key,value) VALUES(?1,?2)");
    st.bind(1, "name").bind(2, name).run();
    st.bind(1, "kind").bind(2, "smoke").run();
    st.bind(1, "campaign_yaml").bind(2, "name: " + name + "\nkind: smoke\nanalysis: {bootstrap_replicates: 2000}\n").run();
    st.bind(1, "schedule_json").bind(2, "{\"cases\":[]}").run();
    st.bind(1, "schedule_sha256").bind(2, harness::digest::sha256_hex("{\"cases\":[]}")).run();
    return path;
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
  EXPECT_EQ(rows[0][0], "compute: reclaim / static");
  // True ratios 0.9 vs 1.2 with tiny noise: B / A near 4/3, intervals apart.
  EXPECT_NEAR(rows[0][9].get<double>(), 1.2 / 0.9, 0.05);
  EXPECT_EQ(rows[0][11], "no");
  EXPECT_EQ(j["provenance"]["campaign_name"], "camp-a");
  EXPECT_NE(j["provenance"]["command_line"].get<std::string>().find("compare"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "cmp" / "compare_table4.csv.meta.json"));
  EXPECT_TRUE(fs::exists(dir / "cmp" / "report.html"));
  EXPECT_NE(slurp(dir / "cmp" / "compare_table4.csv").find("a_ratio,a_ratio_lower"), std::string::npos);
}

TEST_F(ReportCli, CompareWithPublished) {
  const auto a = synthetic("camp-p", 0.938);
  const auto r = sh(harness + " compare --published " + a);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("B = study (published)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0.938"), std::string::npos);
  EXPECT_NE(r.out.find("0.675"), std::string::npos);
  EXPECT_NE(r.out.find("1.020"), std::string::npos);
  EXPECT_NE(r.out.find("0.806"), std::string::npos);
  // Wrong arity: a usage/could-not-run error, not a comparison.
  EXPECT_NE(sh(harness + " compare " + a + " 2>/dev/null").code, 0);
  EXPECT_NE(sh(harness + " compare --published " + a + " " + a + " 2>/dev/null").code, 0);
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
