// A k-arm campaign (k = 5, tests/common/small_synthetic.hpp five_arm_synthetic) through the
// outputs written for k arms: the HTML report has one row per arm in Tables 5, 5b, 6 (per regime)
// and the mechanism table, one per declared comparison in Table 4, Table 2 counts k cases per block,
// and says "block" where the study says "triplet"; the figures script draws one forest row per
// declared comparison and one column / panel / tick per arm (karm_figures_check.py). Also: the
// comparison spellings have one parser (analysis/data/comparison_spelling.hpp).
#include "analysis/report/analysis_report.hpp"
#include "analysis/data/comparison_spelling.hpp"
#include "analysis/report/report_html.hpp"
#include "analysis/simulate/synthetic.hpp"
#include "results/db.hpp"

#include "golden_db.hpp"
#include "report_checks.hpp"
#include "tests/common/small_synthetic.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <fstream>
#include <regex>
#include <sstream>

namespace {

const std::vector<std::string> kArms{"static-zram", "delayed-activation", "bounded-reclaim", "senpai", "bounded-loop"};
const std::vector<std::string> kLabels{"compute: senpai / static-zram", "sqlite: senpai / static-zram",
                                       "compute: bounded-loop / bounded-reclaim",
                                       "sqlite: bounded-reclaim / static-zram",
                                       "compute: delayed-activation / senpai"};

// The <tr> rows of the HTML table with id `id` (its body), each as its cells' text.
std::vector<std::vector<std::string>> html_rows(const std::string& html, const std::string& id) {
  std::vector<std::vector<std::string>> rows;
  const auto at = html.find("<h2 id=\"" + id + "\">");
  if (at == std::string::npos) return rows;
  const auto body = html.find("<tbody>", at), end = html.find("</tbody>", at);
  const std::string t = html.substr(body, end - body);
  static const std::regex tr("<tr>(.*?)</tr>"), td("<td[^>]*>([^<]*)</td>");
  for (std::sregex_iterator r(t.begin(), t.end(), tr), e; r != e; ++r) {
    const std::string row = (*r)[1];
    std::vector<std::string> cells;
    for (std::sregex_iterator c(row.begin(), row.end(), td); c != e; ++c) cells.push_back((*c)[1]);
    rows.push_back(cells);
  }
  return rows;
}

std::vector<std::string> column(const std::vector<std::vector<std::string>>& rows, std::size_t j) {
  std::vector<std::string> v;
  for (const auto& r : rows) v.push_back(j < r.size() ? r[j] : "");
  return v;
}

}  // namespace

TEST(KArmReport, HtmlHasOneRowPerArmAndPerDeclaredComparison) {
  const auto path = golden::temp_db("karm_html");
  analysis::write_synthetic_campaign(path, test_support::five_arm_synthetic());
  const auto r = analysis::analyze_campaign(path, report_checks::small_bootstrap());
  report_checks::expect_no_nan(r);
  const std::string html = analysis::render_html(r);

  // Table 4: the declared family, in its order; no sensitivity row (nothing lost or overridden).
  EXPECT_EQ(column(html_rows(html, "table4_primary"), 0), kLabels);
  // Tables 5 and 5b: arm x canary; Table 6: regime x arm; mechanism, reclaim execution, outcome
  // counts: one row per arm, in the arms table's order.
  std::vector<std::string> per_canary, per_regime;
  for (const auto& a : kArms) per_canary.insert(per_canary.end(), {a, a});
  for (int g = 0; g < 4; ++g) per_regime.insert(per_regime.end(), kArms.begin(), kArms.end());
  EXPECT_EQ(column(html_rows(html, "table5_wake_service"), 0), per_canary);
  EXPECT_EQ(column(html_rows(html, "table5b_faults_context_switches"), 0), per_canary);
  EXPECT_EQ(column(html_rows(html, "table6_regime_medians"), 1), per_regime);
  for (const char* id : {"mechanism", "outcome_counts"}) EXPECT_EQ(column(html_rows(html, id), 0), kArms) << id;
  // Table 2: per regime, 2 VMs x 2 blocks of 5 cases.
  const auto t2 = html_rows(html, "table2_regimes");
  ASSERT_EQ(t2.size(), 4u);
  for (const auto& row : t2) {
    ASSERT_EQ(row.size(), 8u);
    EXPECT_EQ(row[6], "4");
    EXPECT_EQ(row[7], "20");
  }
  // Table 1 names every arm with its policy and parameters.
  for (const auto& a : kArms)
    EXPECT_NE(html.find("<td>arm " + a + "</td>"), std::string::npos) << a;
  EXPECT_NE(html.find("policy senpai, params {&quot;interval_s&quot;:6}"), std::string::npos);

  // "block", never "triplet", in the text a reader sees (CSV names in title="..." stay the study's).
  EXPECT_NE(html.find("<th title=\"triplets\">blocks</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>blocks per stratum (min / median / max)</td>"), std::string::npos);
  const std::string visible = std::regex_replace(html, std::regex(" title=\"[^\"]*\""), "");
  const auto t = visible.find("triplet");
  EXPECT_EQ(t, std::string::npos) << visible.substr(t == std::string::npos ? 0 : t - std::min<std::size_t>(t, 200), 400);
}

TEST(KArmReport, TheStudysThreeArmsStillSayTriplet) {
  const auto path = golden::temp_db("karm_three");
  analysis::write_synthetic_campaign(path, test_support::small_synthetic());
  const auto r = analysis::analyze_campaign(path, report_checks::small_bootstrap());
  const std::string html = analysis::render_html(r);
  EXPECT_NE(html.find("<th title=\"triplets\">triplets</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>triplets per stratum (min / median / max)</td>"), std::string::npos);
  EXPECT_EQ(html.find(">blocks<"), std::string::npos);
}

TEST(KArmReport, FiguresHaveOneForestRowPerComparisonAndOneColumnPerArm) {
  const auto db = golden::temp_db("karm_fig");
  analysis::write_synthetic_campaign(db, test_support::five_arm_synthetic());
  const std::string out = db + ".figs.json", tradeoff = db + ".tradeoff.json";
  const auto report = analysis::analyze_campaign(db, report_checks::small_bootstrap());
  std::ofstream(tradeoff) << report.extra.at("tradeoff").dump();
  const std::string cmd = "PYTHONPATH=" HARNESS_BINARY_DIR "/analysis/python:" HARNESS_SOURCE_DIR
                          "/analysis/report /usr/bin/python3 " HARNESS_SOURCE_DIR "/tests/unit/analysis/karm_figures_check.py " +
                          db + " " + out + " " + tradeoff;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  const auto j = nlohmann::json::parse(ss.str());
  // Forest: top to bottom the declared family's order, one row each, the generic axis label.
  EXPECT_EQ(j["forest_rows"].get<std::vector<std::string>>(), kLabels);
  EXPECT_EQ(j["forest_xlabel"], "p99 response-time ratio, treatment / comparator (< 1 favours the treatment)");
  EXPECT_NE(j["forest_title"].get<std::string>().find("matched blocks, declared family of 5"), std::string::npos)
      << j["forest_title"];
  // One verdict line per treatment in the title, none over the family.
  const std::string title = j["forest_title"];
  for (const char* t : {"senpai", "bounded-loop", "bounded-reclaim", "delayed-activation"})
    EXPECT_NE(title.find(std::string("\nverdict for ") + t + ": "), std::string::npos) << t << " in " << title;
  EXPECT_EQ(title.find("\nverdict: "), std::string::npos) << title;
  // Trade-off: one panel per canary, one point per declared comparison of that canary, labelled by
  // its treatment and comparator (the family has several comparators).
  EXPECT_EQ(j["tradeoff_points"]["compute canary"], 3);
  EXPECT_EQ(j["tradeoff_points"]["sqlite canary"], 2);
  EXPECT_EQ(j["tradeoff_panels"]["compute canary"].get<std::vector<std::string>>(),
            (std::vector<std::string>{"senpai / static-zram", "bounded-loop / bounded-reclaim", "delayed-activation / senpai"}));
  EXPECT_EQ(j["tradeoff_panels"]["sqlite canary"].get<std::vector<std::string>>(),
            (std::vector<std::string>{"senpai / static-zram", "bounded-reclaim / static-zram"}));
  // p99 by regime: one legend entry (a column in every regime) per arm, in both canaries' panels.
  EXPECT_EQ(j["p99_legend"].get<std::vector<std::string>>(), kArms);
  EXPECT_EQ(j["p99_columns_per_regime"].get<int>(), 5);
  // zram time course: one panel per arm; reclaim execution: one trigger-delay tick per arm.
  EXPECT_EQ(j["zram_panels"].get<std::vector<std::string>>(), kArms);
  EXPECT_EQ(j["trigger_ticks"].get<std::vector<std::string>>(), kArms);
  // The study's campaign keeps the study's axis label.
  EXPECT_EQ(j["study_forest_xlabel"], "p99 response-time ratio, bounded reclaim / comparator (< 1 favours reclaim)");
  EXPECT_EQ(j["study_forest_rows"].size(), 4u);
  // Each figure of a synthetic DB carries the banner, so no PNG alone is taken for a result.
  EXPECT_EQ(j["synthetic_banner"].get<std::string>().rfind("SYNTHETIC DATA", 0), 0u) << j["synthetic_banner"];
  ASSERT_EQ(j["marked"].size(), 5u) << j["marked"];
  for (const auto& [figure, carries] : j["marked"].items()) EXPECT_TRUE(carries.get<bool>()) << figure;
}

TEST(ComparisonSpelling, OneParserForBothSpellings) {
  std::string error;  // the Problem of the last spelling that did not parse
  auto parse = [&](std::string_view text) {
    auto r = analysis::parse_comparison_text(text);
    if (!r) error = r.error().message;
    return r;
  };
  auto c = parse("compute:static-zram");
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->treatment, "bounded-reclaim");  // the study's spelling: the study's treatment
  EXPECT_EQ(c->comparator, "static-zram");
  EXPECT_EQ(analysis::comparison_text(*c), "compute:static-zram");
  c = parse("sqlite:senpai/delayed-activation");
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->canary, "sqlite");
  EXPECT_EQ(c->treatment, "senpai");
  EXPECT_EQ(analysis::comparison_text(*c), "sqlite:senpai/delayed-activation");
  EXPECT_FALSE(parse("gpu:static-zram"));
  EXPECT_NE(error.find("canary 'gpu' is not one of compute, sqlite"), std::string::npos) << error;
  EXPECT_FALSE(parse("static-zram"));
  EXPECT_NE(error.find("has no ':'"), std::string::npos) << error;
  EXPECT_FALSE(parse("compute:a/"));
  EXPECT_NE(error.find("must name arms"), std::string::npos) << error;
  // The same arm twice parses (the spelling is fine) and is a problem of the comparison.
  c = parse("compute:a/a");
  ASSERT_TRUE(c);
  EXPECT_EQ(analysis::check_comparison(*c), harness::problem("treatment and comparator are the same arm (a)"));
  // The analysis reads declared comparisons through it: an unreadable one is named and left out.
  std::vector<std::string> warnings;
  const auto d = analysis::declared_comparisons(
      {{"schedule_json", R"({"analysis":{"comparisons":["compute:senpai/static-zram","gpu:x",)"
                         R"({"canary":"sqlite","treatment":"senpai","comparator":"senpai"}]}})"}},
      warnings);
  ASSERT_EQ(d.comparisons.size(), 1u);
  EXPECT_EQ(d.comparisons[0].label, "compute: senpai / static-zram");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("[1]: 'gpu:x': canary 'gpu' is not one of compute, sqlite"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("[2]: treatment and comparator are the same arm (senpai)"), std::string::npos) << warnings[1];
}

// A family of several treatments (issue 57 item 1): the prespecified verdict is per treatment,
// the study's rule over each treatment's own comparisons at the family's level, grouped in the
// order the family names them; no verdict line spans two treatments, and the family itself gets
// no benefit judgement (general_benefit null); a family of more than four says at which level and
// over how many blocks the study's four were judged; the study's four (one treatment) get the
// study's single verdict.
TEST(KArmReport, EachTreatmentGetsItsOwnPrespecifiedVerdict) {
  const auto path = golden::temp_db("karm_by_treatment");
  analysis::write_synthetic_campaign(path, test_support::five_arm_synthetic());
  const auto r = analysis::analyze_campaign(path, report_checks::small_bootstrap());
  const auto& v = r.extra.at("verdict");
  ASSERT_TRUE(v.at("assessable").get<bool>());
  EXPECT_TRUE(v.at("per_treatment").get<bool>());
  EXPECT_TRUE(v.at("general_benefit").is_null()) << "no verdict over the family";
  const auto& bt = v.at("by_treatment");
  ASSERT_EQ(bt.size(), 4u) << bt.dump(2);
  const std::vector<std::string> order{"senpai", "bounded-loop", "bounded-reclaim", "delayed-activation"};
  const std::vector<std::vector<std::string>> own{{kLabels[0], kLabels[1]}, {kLabels[2]}, {kLabels[3]}, {kLabels[4]}};
  for (std::size_t i = 0; i < order.size(); ++i) {
    SCOPED_TRACE(order[i]);
    EXPECT_EQ(bt[i].at("treatment"), order[i]);
    bool benefit = true;
    std::vector<std::string> harm;
    for (const auto& c : r.extra.at("comparisons")) {
      const std::string label = c.at("label");
      if (std::find(own[i].begin(), own[i].end(), label) == own[i].end()) continue;
      benefit = benefit && c.at("upper").get<double>() < 1 && c.at("estimate").get<double>() <= 0.95;
      if (c.at("lower").get<double>() > 1) harm.push_back(label);
    }
    EXPECT_EQ(bt[i].at("general_benefit").get<bool>(), benefit);
    EXPECT_EQ(bt[i].at("harm").get<std::vector<std::string>>(), harm);
    EXPECT_NE(bt[i].at("text").get<std::string>().find(order[i] + "'s"), std::string::npos);
    // Its line names its own comparisons and no other treatment's.
    const std::string line = r.summary.at(1 + i);
    EXPECT_EQ(line.rfind("**Verdict for " + order[i] + " ", 0), 0u) << line;
    for (std::size_t j = 0; j < kLabels.size(); ++j) {
      const bool mine = std::find(own[i].begin(), own[i].end(), kLabels[j]) != own[i].end();
      EXPECT_EQ(line.find(kLabels[j]) != std::string::npos, mine) << kLabels[j] << " in: " << line;
    }
  }
  // The family's line says the verdicts are per treatment and at which level; it judges nothing.
  EXPECT_NE(r.summary[0].find("ONE VERDICT PER TREATMENT"), std::string::npos) << r.summary[0];
  EXPECT_NE(r.summary[0].find("99% intervals (1 - 0.05/5)"), std::string::npos) << r.summary[0];
  EXPECT_EQ(r.summary[0].find("GENERAL RESPONSIVENESS BENEFIT"), std::string::npos) << r.summary[0];
  // senpai is 1.1x static zram on SQLite in the synthetic truth: its own line says no benefit.
  EXPECT_FALSE(bt[0].at("general_benefit").get<bool>());
  EXPECT_NE(r.summary[1].find("NO GENERAL RESPONSIVENESS BENEFIT"), std::string::npos) << r.summary[1];
  // Five comparisons, one of the study's four among them: where and at which level it was judged.
  EXPECT_NE(r.summary[5].find("The study's four comparisons were judged here at 99% (1 - 0.05/5, the declared family "
                              "of 5), not at the study's 98.75% (1 - 0.05/4), over 16 matched blocks (the study: 60 "
                              "blocks of its three arms); the family holds 1 of them (sqlite: bounded-reclaim / "
                              "static-zram)."),
            std::string::npos)
      << r.summary[5];
  EXPECT_EQ(v.at("study_four"), r.summary[5]);

  const auto path3 = golden::temp_db("karm_by_treatment_study");
  analysis::write_synthetic_campaign(path3, test_support::small_synthetic());
  const auto r3 = analysis::analyze_campaign(path3, report_checks::small_bootstrap());
  EXPECT_TRUE(r3.extra.at("verdict").at("by_treatment").empty());
  EXPECT_FALSE(r3.extra.at("verdict").at("per_treatment").get<bool>());
  EXPECT_TRUE(r3.extra.at("verdict").at("general_benefit").is_boolean());
  EXPECT_EQ(r3.extra.at("verdict").at("study_four"), "");
  EXPECT_NE(r3.summary.at(0).find("by the predefined all-four rule"), std::string::npos) << r3.summary.at(0);
}

// A family of eight as campaigns/policies.yaml declares it (the study's four, and two other
// treatments against static zram per canary): bounded-reclaim's verdict is the study's rule in the
// study's words over its four, each at 99.375% (1 - 0.05/8), and the report says the study's four
// were judged at that level over the campaign's blocks, not at 98.75%.
TEST(KArmReport, TheStudysFourInAFamilyOfEight) {
  analysis::SyntheticOptions o = test_support::five_arm_synthetic();
  o.comparisons = {"compute:static-zram", "compute:delayed-activation", "sqlite:static-zram",
                   "sqlite:delayed-activation", "compute:senpai/static-zram", "sqlite:senpai/static-zram",
                   "compute:bounded-loop/static-zram", "sqlite:bounded-loop/static-zram"};
  const auto path = golden::temp_db("karm_family_of_eight");
  analysis::write_synthetic_campaign(path, o);
  analysis::PrimaryOptions opt = report_checks::small_bootstrap();
  opt.bootstrap.replicates = analysis::minimum_replicates(0.05, 8);  // 3,200: m = 8 needs more than 2,000
  const auto r = analysis::analyze_campaign(path, opt);
  const auto& bt = r.extra.at("verdict").at("by_treatment");
  ASSERT_EQ(bt.size(), 3u) << bt.dump(2);
  EXPECT_EQ(bt[0].at("treatment"), "bounded-reclaim");
  EXPECT_NE(bt[0].at("text").get<std::string>().find("by the predefined all-four rule"), std::string::npos)
      << bt[0].at("text");
  EXPECT_NE(r.summary.at(0).find("99.375% intervals (1 - 0.05/8)"), std::string::npos) << r.summary.at(0);
  EXPECT_EQ(r.summary.at(4), "The study's four comparisons were judged here at 99.375% (1 - 0.05/8, the declared "
                             "family of 8), not at the study's 98.75% (1 - 0.05/4), over 16 matched blocks (the "
                             "study: 60 blocks of its three arms).");
}

// Issue 59 item 4: an extra arm of a synthetic campaign has static zram's p99 times exp(its
// effect), whatever arm it acts like (`like` picks its mechanism rows only): with no case noise,
// its ratio to static zram is exp(effect) exactly and to bounded reclaim exp(effect) / the
// study's true ratio; an arm like bounded reclaim has its memory.reclaim write. The Python
// docstring of write_synthetic says so (before, it and analysis/README.md said "acts like arm
// `like` ... times its effect").
TEST(KArmSynthetic, AnExtraArmIsStaticZramTimesItsEffectWhateverItActsLike) {
  const auto path = golden::temp_db("karm_like");
  analysis::SyntheticOptions o{.seed = 3, .vms = 2, .triplets_per_stratum = 2, .case_sd = 0.0};
  o.extra_arms = {{"r32", "bounded-reclaim", R"({"dose_mib":32})", {std::log(0.9), std::log(1.1)}, 2},
                  {"late", "delayed-activation", "{}", {0.0, 0.0}, 1}};
  o.comparisons = {"compute:r32/static-zram", "sqlite:r32/static-zram", "compute:r32/bounded-reclaim",
                   "compute:late/static-zram"};
  o.write_arms = true;
  analysis::write_synthetic_campaign(path, o);
  const auto r = analysis::analyze_campaign(path, report_checks::small_bootstrap());
  const auto& t4 = report_checks::table(r, "table4_primary");
  const auto ci = analysis::column_index(t4, "comparison"), ei = analysis::column_index(t4, "ratio");
  std::map<std::string, double> ratio;
  for (const auto& row : t4.rows) ratio[row[ci].get<std::string>()] = row[ei].get<double>();
  ASSERT_EQ(ratio.size(), 4u) << t4.rows.size();
  EXPECT_NEAR(ratio.at("compute: r32 / static-zram"), 0.9, 1e-6);
  EXPECT_NEAR(ratio.at("sqlite: r32 / static-zram"), 1.1, 1e-6);
  EXPECT_NEAR(ratio.at("compute: r32 / bounded-reclaim"), 0.9 / o.true_ratios[0], 1e-6);
  EXPECT_NEAR(ratio.at("compute: late / static-zram"), 1.0, 1e-6);  // like delayed activation, p99 as static zram
  {
    results::Db db(path, results::Db::Mode::ReadOnly);
    results::Stmt q(db, "SELECT count(*) FROM reclaim_actions WHERE case_id LIKE '%-r32'");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.int64(0), 2 * 4 * 2);  // one write per r32 case: it acts like bounded reclaim
  }
  const std::string doc = path + ".doc.txt";
  const std::string cmd = "PYTHONPATH=" HARNESS_BINARY_DIR "/analysis/python /usr/bin/python3 -c "
                          "'import harness_analysis as h; print(h.write_synthetic.__doc__)' > " + doc;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(doc);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_NE(ss.str().find("each arm's p99 is static zram's p99 times exp(its log effect) whatever `like` says"),
            std::string::npos)
      << ss.str();
}
