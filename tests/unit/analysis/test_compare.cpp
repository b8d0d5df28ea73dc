// `harness compare` library: Table 4 and mechanism medians side by side (analysis/compare/compare.hpp),
// on golden DBs with known p99 values, and against the study's published Table 4.
#include "analysis/report/analysis_report.hpp"
#include "analysis/compare/compare.hpp"
#include "analysis/compare/compare_published.hpp"
#include "analysis/data/study_facts.hpp"
#include "analysis/simulate/synthetic.hpp"

#include "golden_db.hpp"
#include "tests/common/small_synthetic.hpp"
#include "tests/unit/analysis/report_checks.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

analysis::Report report_of(const std::vector<golden::Case>& cases, const std::string& stem) {
  const auto path = golden::written_db(stem, cases);
  analysis::PrimaryOptions opt;
  opt.bootstrap = {2000, 7, 1};
  return analysis::analyze_campaign(path, opt);
}

using report_checks::table;

}  // namespace

TEST(Compare, SideFromReportReadsTable4AndMechanism) {
  const auto r = report_of(golden::two_strata_three_repeats(), "side");
  const auto s = analysis::side_from_report(r, "a.db");
  ASSERT_EQ(s.table4.size(), 4u);
  EXPECT_EQ(s.table4[1].label, "compute: bounded-reclaim / delayed-activation");
  EXPECT_EQ(s.table4[1].triplets, 6);
  // golden: compute reclaim/static per triplet (9000 + 100 r) / 10000, r = 1..3 in both strata:
  // the estimate is the geometric mean of 0.91, 0.92, 0.93.
  EXPECT_NEAR(s.table4[0].estimate, std::exp((std::log(0.91) + std::log(0.92) + std::log(0.93)) / 3), 1e-9);
  ASSERT_EQ(s.mechanism.size(), 3u);
  EXPECT_TRUE(s.mechanism.at("bounded-reclaim").count("swap_out_kib"));
}

TEST(Compare, TwoCampaignsSideBySide) {
  auto slower = golden::two_strata_three_repeats();
  for (auto& c : slower)  // campaign B: bounded reclaim's compute p99 doubled
    if (c.configuration == "bounded-reclaim") c.compute_p99_us *= 2;
  const auto a = analysis::side_from_report(report_of(golden::two_strata_three_repeats(), "a"), "A.db");
  const auto b = analysis::side_from_report(report_of(slower, "b"), "B.db");
  const auto r = analysis::compare_sides(a, b);
  // The sides are named in the first paragraph (issue 59: a title that names them is too wide).
  EXPECT_EQ(r.title, "Reclaim ablation: comparison of 2 sides, A the reference");
  ASSERT_FALSE(r.summary.empty());
  EXPECT_EQ(r.summary.front(), "Sides: A = A.db; B = B.db.");
  const auto& t = table(r, "compare_table4");
  ASSERT_EQ(t.rows.size(), 4u);
  // compute / static: B's ratio is twice A's; the sqlite comparisons are unchanged.
  EXPECT_NEAR(t.rows[0][9].get<double>(), 2.0, 1e-9);                       // B / A
  EXPECT_NEAR(t.rows[0][10].get<double>(), a.table4[0].estimate, 1e-9);     // B - A = A
  EXPECT_EQ(t.rows[0][11], "no");                                           // intervals overlap
  EXPECT_NEAR(t.rows[2][9].get<double>(), 1.0, 1e-12);
  EXPECT_EQ(t.rows[2][11], "yes");
  EXPECT_EQ(t.rows[2][12], "yes");
  // Golden DBs have no telemetry: a quantity neither side has is left out, not shown as 0.
  EXPECT_TRUE(table(r, "compare_mechanism").rows.empty());
}

TEST(Compare, MechanismDifferences) {
  auto synth = [](std::uint64_t seed, const std::string& stem) {
    const auto path = golden::temp_db(stem);
    analysis::SyntheticOptions o = test_support::small_synthetic("kvm");
    o.seed = seed;
    analysis::write_synthetic_campaign(path, o);
    analysis::PrimaryOptions opt;
    opt.bootstrap = {2000, 1, 1};
    return analysis::side_from_report(analysis::analyze_campaign(path, opt), path);
  };
  const auto a = synth(1, "ma"), b = synth(2, "mb");
  const auto r = analysis::compare_sides(a, b);
  const auto& m = table(r, "compare_mechanism");
  ASSERT_GE(m.rows.size(), 3u);
  int both = 0;
  for (const auto& row : m.rows) {
    const auto& qa = a.mechanism.at(row[0].get<std::string>());
    ASSERT_FALSE(qa.empty());
    if (!row[2].is_number() || !row[3].is_number()) continue;
    ++both;
    EXPECT_NEAR(row[4].get<double>(), row[3].get<double>() - row[2].get<double>(), 1e-9);
    if (row[2].get<double>() != 0) {
      EXPECT_NEAR(row[5].get<double>(), 100 * (row[3].get<double>() / row[2].get<double>() - 1), 1e-9);
    }
  }
  EXPECT_GE(both, 3);
}

TEST(Compare, PublishedValuesInTheStudysOrder) {
  const auto p = analysis::published_side();
  ASSERT_EQ(p.table4.size(), 4u);
  EXPECT_EQ(p.table4[0].label, "compute: bounded-reclaim / static-zram");
  EXPECT_DOUBLE_EQ(p.table4[0].estimate, 0.938);
  EXPECT_DOUBLE_EQ(p.table4[1].lower, 0.675);
  EXPECT_EQ(p.table4[2].label, "sqlite: bounded-reclaim / static-zram");
  EXPECT_DOUBLE_EQ(p.table4[2].upper, 1.020);
  EXPECT_DOUBLE_EQ(p.table4[3].estimate, 0.765);
  const auto a = analysis::side_from_report(report_of(golden::two_strata_three_repeats(), "pub"), "c.db");
  const auto r = analysis::compare_sides(a, p);
  const auto& t = table(r, "compare_table4");
  ASSERT_EQ(t.rows.size(), 4u);
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(t.rows[j][0], p.table4[j].label);
    EXPECT_DOUBLE_EQ(t.rows[j][6].get<double>(), analysis::kStudyTable4[j].estimate);
    EXPECT_EQ(t.rows[j][5], 60);
    EXPECT_NEAR(t.rows[j][9].get<double>(), analysis::kStudyTable4[j].estimate / a.table4[j].estimate, 1e-12);
  }
  // Mechanism: only what the study published has a B value: swap-out and refaults. Its PSI
  // stall names no owner, so it is none of the bg, fg or system quantities.
  const auto& m = table(r, "compare_mechanism");
  int with_b = 0;
  for (const auto& row : m.rows) {
    with_b += row[3].is_number();
    if (row[1].get<std::string>().find("PSI") != std::string::npos) {
      EXPECT_TRUE(row[3].is_null()) << row[1];
    }
  }
  EXPECT_EQ(with_b, 3 * 2);
}

TEST(Compare, TcgSideIsWarned) {
  auto cases = golden::two_strata_three_repeats();
  for (auto& c : cases) c.accelerator = "tcg";
  auto rep = report_of(cases, "tcg");
  rep.provenance = results::Provenance{};
  rep.provenance->accelerators = {"tcg"};
  const auto r = analysis::compare_sides(analysis::side_from_report(rep, "t.db"), analysis::published_side());
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("A (t.db) ran under TCG"), std::string::npos);
}

// The study does not say whose PSI its stall medians are, so `harness compare
// --published` sets them beside this campaign's bg, fg and system medians (table published_stall),
// taken from the campaign's mechanism table. Synthetic campaign: system some = 1.01 x bg some,
// system full = 0.5 x bg full, fg full = 0 (analysis/simulate/synthetic.cpp).
TEST(Compare, PublishedStallShowsBgFgAndSystemBesideTheStudy) {
  const auto path = golden::temp_db("pstall");
  analysis::write_synthetic_campaign(path, test_support::small_synthetic("kvm"));
  analysis::PrimaryOptions opt;
  opt.bootstrap = {2000, 1, 1};
  const auto ours = analysis::analyze_campaign(path, opt);
  const auto r = analysis::compare_with_study(ours, path);
  const auto& t = table(r, "published_stall");
  const auto& mech = table(ours, "mechanism");
  ASSERT_EQ(t.rows.size(), 6u);
  for (int i = 0; i < 3; ++i) {
    const std::string arm = analysis::kStudyArms[i].name;
    const std::vector<nlohmann::json>* m = nullptr;
    for (const auto& row : mech.rows)
      if (row[0] == arm) m = &row;
    ASSERT_NE(m, nullptr) << arm;
    for (int k = 0; k < 2; ++k) {
      const auto& row = t.rows[2 * i + k];
      const std::string state = k == 0 ? "some" : "full";
      SCOPED_TRACE(arm + " " + state);
      EXPECT_EQ(row[analysis::column_index(t, "configuration")], arm);
      EXPECT_EQ(row[analysis::column_index(t, "state")], state);
      const auto& s = analysis::kStudyMechanism[i];
      EXPECT_DOUBLE_EQ(row[analysis::column_index(t, "study_s")].get<double>(), k == 0 ? s.some_s : s.full_s);
      const double bg = (*m)[analysis::column_index(mech, "bg_psi_" + state + "_stall_s")].get<double>();
      EXPECT_GT(bg, 0.0);
      EXPECT_DOUBLE_EQ(row[analysis::column_index(t, "bg_s")].get<double>(), bg);
      EXPECT_DOUBLE_EQ(row[analysis::column_index(t, "fg_s")].get<double>(), (*m)[analysis::column_index(mech, "fg_psi_" + state + "_stall_s")].get<double>());
      EXPECT_DOUBLE_EQ(row[analysis::column_index(t, "system_s")].get<double>(),
                       (*m)[analysis::column_index(mech, "system_psi_" + state + "_stall_s")].get<double>());
      EXPECT_NEAR(row[analysis::column_index(t, "system_s")].get<double>() / bg, k == 0 ? 1.01 : 0.5, 1e-3);
      if (k == 1) {
        EXPECT_DOUBLE_EQ(row[analysis::column_index(t, "fg_s")].get<double>(), 0.0);
      }
    }
  }
  // The text says whose PSI is unknown and keeps the multi-task reading a conjecture.
  ASSERT_FALSE(t.notes.empty());
  EXPECT_NE(t.notes[0].find("it does not say whether these are the background group's, the foreground group's or "
                            "the whole system's"), std::string::npos);
  EXPECT_NE(t.notes[0].find("Conjecture, not the study's word"), std::string::npos);
}
