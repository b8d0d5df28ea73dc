// Reports with provenance: title by campaign kind, provenance in report.md/json/html
// and every CSV sidecar, tidy CSV column names, latency in ms, Table 1 environment rows in
// consistent units, the self-contained report.html with embedded figures.
#include "analysis/report/analysis_report.hpp"
#include "analysis/tables/primary.hpp"
#include "analysis/report/report_html.hpp"
#include "analysis/data/triplets.hpp"
#include "analysis/simulate/synthetic.hpp"
#include "results/db.hpp"

#include "golden_db.hpp"
#include "tests/common/small_synthetic.hpp"
#include "tests/unit/analysis/report_checks.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void set_meta(const std::string& db_path, const std::string& key, const std::string& value) {
  results::Db db(db_path, results::Db::Mode::ReadWrite);
  results::Stmt st(db, "INSERT OR REPLACE INTO campaign_meta(key,value) VALUES(?1,?2)");
  st.bind(1, key).bind(2, value).run();
}

analysis::Report synthetic_report(const std::string& path) {
  analysis::write_synthetic_campaign(path, test_support::small_synthetic());
  analysis::PrimaryOptions opt;
  opt.bootstrap = {2000, 1, 2};
  return analysis::analyze_campaign(path, opt);
}

using report_checks::table;

std::string value_of(const analysis::Table& t, const std::string& setting) {
  for (const auto& row : t.rows)
    if (row[0] == setting) return row[1].get<std::string>();
  return "<absent>";
}

results::Provenance sample_provenance() {
  results::Provenance p;
  p.build = {"1.2.3", std::string(40, 'a'), true};
  p.campaign_name = "smoke";
  p.campaign_kind = "smoke";
  p.plan_sha256 = std::string(64, 'b');
  p.generated_utc = "2026-11-30T22:00:00Z";
  p.command_line = "harness analyze x.db --out 'my dir'";
  p.accelerators = {"tcg"};
  p.kernels = {"6.1.0-57-cloud-amd64"};
  return p;
}

}  // namespace

TEST(ReportProvenance, TidyNames) {
  EXPECT_EQ(analysis::tidy_name("wake p50 (ms)"), "wake_p50_ms");
  EXPECT_EQ(analysis::tidy_name("allocation rate, nominal (MiB/s)"), "allocation_rate_nominal_mib_s");
  EXPECT_EQ(analysis::tidy_name("change (%)"), "change_pct");
  EXPECT_EQ(analysis::tidy_name("study: swap-out (KiB)"), "study_swap_out_kib");
  EXPECT_EQ(analysis::tidy_name("lower (98.75%)"), "lower_98_75_pct");
  EXPECT_EQ(analysis::tidy_name("10% tail"), "col_10_pct_tail");
  EXPECT_EQ(analysis::column_name({"lower (98.75%)", 3, "ratio_lower"}), "ratio_lower");
}

TEST(ReportProvenance, EveryCsvHeaderIsTidyAndUnique) {
  const auto r = synthetic_report(golden::temp_db("tidy"));
  const std::regex tidy("[a-z][a-z0-9_]*");
  ASSERT_GE(r.tables.size(), 10u);
  for (const auto& t : r.tables) {
    const std::string csv = analysis::render_csv(t);
    const std::string header = csv.substr(0, csv.find('\n'));
    std::set<std::string> seen;
    std::stringstream ss(header);
    int n = 0;
    for (std::string h; std::getline(ss, h, ',');) {
      ++n;
      EXPECT_TRUE(std::regex_match(h, tidy)) << t.id << ": '" << h << "'";
      EXPECT_TRUE(seen.insert(h).second) << t.id << ": duplicate " << h;
    }
    EXPECT_EQ(n, static_cast<int>(t.columns.size())) << t.id;
  }
  const std::string t4 = analysis::render_csv(table(r, "table4_primary"));
  EXPECT_EQ(t4.substr(0, t4.find('\n')),
            "comparison,triplets,ratio,ratio_lower,ratio_upper,change_pct,harm,corrected_lower,corrected_upper,analysis");
  const std::string t5 = analysis::render_csv(table(r, "table5_wake_service"));
  EXPECT_NE(t5.find("wake_p50_median_ms"), std::string::npos) << t5;
  EXPECT_NE(t5.find("deadline_misses_sum"), std::string::npos) << t5;
}

TEST(ReportProvenance, LatencyTablesInMsAbsoluteDifferencesInUsAndTable5SaysSums) {
  // Golden: static compute p99 = 10,000 us, delayed 12,000 us in every stratum (golden_db.hpp).
  const auto path = golden::written_db("ms", golden::two_strata_three_repeats());
  analysis::PrimaryOptions opt;
  opt.bootstrap = {2000, 1, 1};
  const auto r = analysis::analyze_campaign(path, opt);
  const auto& t6 = table(r, "table6_regime_medians");
  ASSERT_EQ(t6.rows.size(), 3u);
  EXPECT_EQ(t6.rows[0][1], "static-zram");
  EXPECT_DOUBLE_EQ(t6.rows[0][4].get<double>(), 10.0);  // ms
  EXPECT_DOUBLE_EQ(t6.rows[1][4].get<double>(), 12.0);
  EXPECT_DOUBLE_EQ(t6.rows[0][5].get<double>(), 20.0);  // sqlite static 20,000 us
  const auto& t5 = table(r, "table5_wake_service");
  EXPECT_NE(t5.title.find("summed over cases"), std::string::npos) << t5.title;
  EXPECT_DOUBLE_EQ(t5.rows[0][10].get<double>(), 10.0);  // response p99 median, static compute, ms
  // deadline misses and requests are sums over the 6 static cases (101 pressure requests each)
  EXPECT_EQ(t5.rows[0][12], 6 * 101);
  const auto& ad = table(r, "absolute_differences");
  // Absolute differences in microseconds, the study's unit ("in microseconds"): the header says
  // so and the value is the primary result's estimate_us unscaled.
  ASSERT_EQ(ad.columns.size(), 5u);
  for (std::size_t i = 2; i < ad.columns.size(); ++i) {
    EXPECT_NE(ad.columns[i].header.find("(us"), std::string::npos) << ad.columns[i].header;
    EXPECT_EQ(ad.columns[i].header.find("ms"), std::string::npos) << ad.columns[i].header;
  }
  EXPECT_EQ(analysis::column_name(ad.columns[2]), "difference_us");
  const auto pr = analysis::run_primary(analysis::build_triplets(analysis::load_campaign(path)), opt);
  ASSERT_EQ(ad.rows.size(), pr.abs_diffs.size());
  for (std::size_t i = 0; i < ad.rows.size(); ++i)
    EXPECT_NEAR(ad.rows[i][2].get<double>(), pr.abs_diffs[i].estimate_us, 0.05) << i;
}

TEST(ReportProvenance, TitleFollowsCampaignKind) {
  const auto path = golden::written_db("kind", golden::two_strata_three_repeats());
  analysis::PrimaryOptions opt;
  opt.bootstrap = {2000, 1, 1};
  EXPECT_NE(analysis::analyze_campaign(path, opt).title.find("kind not recorded"), std::string::npos);
  set_meta(path, "name", "smoke");
  set_meta(path, "campaign_yaml", "name: smoke\nkind: smoke\n");  // a DB planned before campaign_meta.kind
  EXPECT_EQ(analysis::analyze_campaign(path, opt).title, "Reclaim ablation: smoke run smoke (mechanism check, not evidence)");
  set_meta(path, "kind", "ci");
  EXPECT_EQ(analysis::analyze_campaign(path, opt).title, "Reclaim ablation: CI regression run smoke");
  set_meta(path, "kind", "confirmatory");
  EXPECT_EQ(analysis::analyze_campaign(path, opt).title, "Reclaim ablation: confirmatory analysis of smoke");
}

TEST(ReportProvenance, Table1HasEnvironmentInMiB) {
  const auto path = golden::written_db("env", golden::two_strata_three_repeats());
  {
    results::Db db(path, results::Db::Mode::ReadWrite);
    db.exec(R"(UPDATE cases SET environment_json = '{"kernel_release":"6.1.0-57-cloud-amd64","clocksource":"tsc",)"
            R"("mglru_enabled":"0x0000","thp_enabled":"always","swappiness":60,"memtotal_kib":995596,)"
            R"("online_cpus":1,"page_size_bytes":4096,"cmdline":"console=ttyS0"}')");
    db.exec(R"(UPDATE cases SET qualification_json = '{"passed":true,"recorded":{"zram_algorithms":["lzo","zstd"],)"
            R"("kernel_config":{"CONFIG_PSI":"y","CONFIG_PSI_DEFAULT_DISABLED":"n"}}}')");
    // One case has a different swappiness: Table 1 must say it varies, not hide it.
    db.exec("UPDATE cases SET environment_json = json_set(environment_json, '$.swappiness', 100) WHERE rowid = 1");
    db.exec("INSERT INTO artifacts(case_id, name, content) SELECT case_id, 'canary-sqlite.json', "
            "'{\"rows\":80000,\"payload_bytes\":1536,\"queries_per_request\":8}' FROM cases");
  }
  analysis::PrimaryOptions opt;
  opt.bootstrap = {2000, 1, 1};
  const auto r = analysis::analyze_campaign(path, opt);
  const auto& t1 = table(r, "table1_constants");
  EXPECT_EQ(value_of(t1, "environment: MGLRU (/sys/kernel/mm/lru_gen/enabled)"), "off (0x0000)");
  EXPECT_EQ(value_of(t1, "environment: transparent hugepages (enabled)"), "always");
  EXPECT_EQ(value_of(t1, "environment: clocksource"), "tsc");
  EXPECT_EQ(value_of(t1, "environment: guest MemTotal (MiB)"), "972.3");
  EXPECT_EQ(value_of(t1, "environment: page size (KiB)"), "4");
  EXPECT_EQ(value_of(t1, "environment: vm.swappiness"), "varies: 100 (1 case); 60 (17 cases)");
  EXPECT_EQ(value_of(t1, "environment: SQLite canary rows"), "80000");
  EXPECT_EQ(value_of(t1, "environment: SQLite canary payload (bytes per row)"), "1536");
  EXPECT_EQ(value_of(t1, "environment: PSI (CONFIG_PSI / CONFIG_PSI_DEFAULT_DISABLED)"), "y / n");
  EXPECT_EQ(value_of(t1, "environment: qualification (harness qualify at case start)"), "passed");
  EXPECT_EQ(value_of(t1, "environment: guest kernel version"), "not recorded");
  // No raw byte counts: sizes from the spec are in MiB.
  for (const auto& row : t1.rows) EXPECT_EQ(row[0].get<std::string>().find("_bytes"), std::string::npos) << row[0];
}

TEST(ReportProvenance, SyntheticSpecBytesShownInMiB) {
  const auto r = synthetic_report(golden::temp_db("mib"));
  const auto& t1 = table(r, "table1_constants");
  EXPECT_EQ(value_of(t1, "cgroups.bg_memory_max (MiB)"), "300");
  EXPECT_EQ(value_of(t1, "backend.zram_disksize (MiB)"), "512");
  EXPECT_EQ(value_of(t1, "bounded-reclaim dose, memory.reclaim write (MiB)"), "96");
  // The pilot rule's reading is an assumption of ours (campaigns/README.md): the default here.
  EXPECT_EQ(value_of(t1, "analysis rule (ours): pilot rule reading").rfind("restoration clean, EAGAIN interface-error (", 0),
            0u) << value_of(t1, "analysis rule (ours): pilot rule reading");
}

TEST(ReportProvenance, FilesCarryProvenanceAndHtmlIsSelfContained) {
  const auto path = golden::temp_db("prov");
  auto r = synthetic_report(path);
  r.provenance = sample_provenance();
  const fs::path dir = fs::path(path).parent_path() / "prov_out";
  // A figure: bytes whose base64 is known.
  fs::create_directories(dir);
  const fs::path png = dir / "forest.png";
  std::ofstream(png, std::ios::binary) << "foobar";
  r.figures = {png.string(), (dir / "missing.png").string()};
  analysis::write_report_files(r, dir.string());

  const std::string md = read(dir / "report.md");
  EXPECT_NE(md.find("- Harness: 1.2.3, source " + std::string(40, 'a') + " (dirty"), std::string::npos) << md.substr(0, 600);
  EXPECT_NE(md.find("plan SHA-256 " + std::string(64, 'b')), std::string::npos);
  EXPECT_NE(md.find("accelerator tcg"), std::string::npos);
  const auto j = nlohmann::json::parse(read(dir / "report.json"));
  EXPECT_EQ(j["provenance"]["source_commit"], std::string(40, 'a'));
  EXPECT_EQ(j["provenance"]["source_dirty"], true);
  EXPECT_EQ(j["provenance"]["command_line"], "harness analyze x.db --out 'my dir'");
  EXPECT_EQ(j["tables"][2]["column_names"][3], "ratio_lower");
  int sidecars = 0;
  for (const auto& t : r.tables) {
    const auto side = dir / (t.id + ".csv.meta.json");
    ASSERT_TRUE(fs::exists(side)) << side;
    const auto s = nlohmann::json::parse(read(side));
    EXPECT_EQ(s["artifact"], t.id + ".csv");
    EXPECT_EQ(s["plan_sha256"], std::string(64, 'b'));
    EXPECT_EQ(s["kernels"][0], "6.1.0-57-cloud-amd64");
    ++sidecars;
  }
  EXPECT_EQ(sidecars, static_cast<int>(r.tables.size()));

  const std::string html = read(dir / "report.html");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<img alt=\"forest.png\" src=\"data:image/png;base64,Zm9vYmFy\">"), std::string::npos);
  EXPECT_NE(html.find("figure missing.png could not be read"), std::string::npos);
  EXPECT_NE(html.find("<h2 id=\"table4_primary\">"), std::string::npos);
  EXPECT_NE(html.find("<th title=\"ratio_lower\">lower (98.75%)</th>"), std::string::npos);
  EXPECT_NE(html.find("<code>harness analyze x.db --out &apos;my dir&apos;</code>"), std::string::npos);
  EXPECT_NE(html.find("timings are inflated under TCG"), std::string::npos);
  // Self-contained: nothing fetched from elsewhere.
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("src=\"/"), std::string::npos);
  // Without provenance: no sidecars, no provenance key.
  analysis::Report bare = r;
  bare.provenance.reset();
  const fs::path dir2 = fs::path(path).parent_path() / "prov_out2";
  analysis::write_report_files(bare, dir2.string());
  EXPECT_FALSE(fs::exists(dir2 / "table4_primary.csv.meta.json"));
  EXPECT_FALSE(nlohmann::json::parse(read(dir2 / "report.json")).contains("provenance"));
}

TEST(ReportProvenance, Base64KnownVectors) {
  EXPECT_EQ(analysis::base64(""), "");
  EXPECT_EQ(analysis::base64("f"), "Zg==");
  EXPECT_EQ(analysis::base64("fo"), "Zm8=");
  EXPECT_EQ(analysis::base64("foo"), "Zm9v");
  EXPECT_EQ(analysis::base64("foob"), "Zm9vYg==");
  EXPECT_EQ(analysis::base64(std::string("\xff\x00\x80", 3)), "/wCA");
}
