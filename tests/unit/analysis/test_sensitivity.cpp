// Table 4's sensitivity rows (complete cases without imputation; original outcomes of overridden
// cases reinstated), the override warnings, and the secondary tables over every completed and
// lost case of each configuration (Tables 5, 5b, 6, mechanism) with their counts.
#include "analysis/report/analysis_report.hpp"
#include "analysis/data/overrides.hpp"
#include "results/db.hpp"

#include "golden_db.hpp"
#include "report_checks.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using report_checks::expect_no_nan;

using report_checks::table;

using analysis::column_index;

/// Rows of Table 4 whose analysis column starts with `prefix`.
std::vector<std::vector<nlohmann::json>> rows_of(const analysis::Table& t4, const std::string& prefix) {
  std::vector<std::vector<nlohmann::json>> out;
  for (const auto& r : t4.rows)
    if (r[column_index(t4, "analysis")].get<std::string>().rfind(prefix, 0) == 0) out.push_back(r);
  return out;
}

analysis::Report report_of(const std::string& path) {
  const auto data = analysis::load_campaign(path);
  const auto ts = analysis::build_triplets(data);
  return analysis::build_analysis_report(data, ts, analysis::run_primary(ts, report_checks::small_bootstrap()));
}

bool any_contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x.find(s) != std::string::npos) return true;
  return false;
}

}  // namespace

// One lost comparator (vm0-r-1-static-zram): the primary rows impute its p99 (worst observed),
// the complete-case rows leave its triplet out.
TEST(Sensitivity, CompleteCaseRowLeavesOutTheTripletOfTheLostComparator) {
  auto cases = golden::two_strata_three_repeats();
  cases[0].status = "lost";
  const auto r = report_of(golden::written_db("sens_lost", cases));
  const auto& t4 = table(r, "table4_primary");
  const auto primary = rows_of(t4, "primary");
  const auto cc = rows_of(t4, "complete cases (1 triplet(s) with a lost member left out)");
  ASSERT_EQ(primary.size(), 4u);
  ASSERT_EQ(cc.size(), 4u);
  EXPECT_EQ(primary[0][column_index(t4, "triplets")], 6);
  EXPECT_EQ(cc[0][column_index(t4, "triplets")], 5);
  // compute reclaim/static, p99 reclaim 9000 + 100 rep, static 10000 (imputed: 12000).
  const double vm1 = (std::log(0.91) + std::log(0.92) + std::log(0.93)) / 3;
  const double imputed = (std::log(9100.0 / 12000.0) + std::log(0.92) + std::log(0.93)) / 3;
  const double dropped = (std::log(0.92) + std::log(0.93)) / 2;
  EXPECT_NEAR(primary[0][column_index(t4, "ratio")].get<double>(), std::exp((imputed + vm1) / 2), 1e-12);
  EXPECT_NEAR(cc[0][column_index(t4, "ratio")].get<double>(), std::exp((dropped + vm1) / 2), 1e-12);
  // The delayed comparison's triplet is dropped too (complete-case at the triplet level).
  EXPECT_EQ(cc[1][column_index(t4, "triplets")], 5);
  EXPECT_TRUE(any_contains(t4.notes, "\"complete cases\" leaves out every triplet with a lost member"));
  const auto& extra = r.extra.at("sensitivity");
  ASSERT_EQ(extra.size(), 1u);
  EXPECT_EQ(extra[0].at("comparisons").size(), 4u);
  expect_no_nan(r);
}

TEST(Sensitivity, NoLostCaseNoCompleteCaseRowsAndCompareReadsOnlyPrimaryRows) {
  const auto r = report_of(golden::written_db("sens_none", golden::two_strata_three_repeats()));
  const auto& t4 = table(r, "table4_primary");
  EXPECT_EQ(t4.rows.size(), 4u);
  EXPECT_EQ(rows_of(t4, "primary").size(), 4u);
}

// An overridden completed case: the report warns with its original p99s, and Table 4 shows the
// estimates with its original outcome reinstated (the rerun's numbers are in the primary rows).
TEST(Sensitivity, OverriddenOutcomeIsWarnedAndReinstatedInTable4) {
  auto cases = golden::two_strata_three_repeats();
  const std::string id = "vm1-r-2-static-zram";
  const auto path = golden::written_db("sens_override", cases);
  nlohmann::json original;
  {
    results::Db db(path, results::Db::Mode::ReadWrite);
    original = analysis::original_outcome_record(db, id);  // as mark-infra keeps it: the completed case's p99s
  }
  ASSERT_EQ(original.at("status"), "completed");
  EXPECT_EQ(original.at("case").at("triplet_id"), "vm1/r/2");
  EXPECT_DOUBLE_EQ(original.at("canaries").at("compute").at("p99_us").get<double>(), 10000.0);
  EXPECT_DOUBLE_EQ(original.at("canaries").at("sqlite").at("p99_us").get<double>(), 20000.0);
  // Say the original was slower (30 / 40 ms) and the rerun is what the DB holds now.
  original["canaries"]["compute"]["p99_us"] = 30000.0;
  original["canaries"]["sqlite"]["p99_us"] = 40000.0;
  {
    results::Db db(path, results::Db::Mode::ReadWrite);
    results::Stmt ins(db, "INSERT INTO attempts(case_id,attempt,status,kind,detail_json) VALUES "
                          "(?1,1,'completed','run',NULL), (?1,2,'marked_infra','mark-infra',?2), (?1,3,'completed','run',NULL)");
    ins.bind(1, id).bind(2, nlohmann::json{{"reason", "host froze"}, {"previous_status", "completed"},
                                            {"operator", "alice"}, {"override_outcome", true},
                                            {"original_outcome", original}}
                                .dump());
    ins.run();
  }
  const auto r = report_of(path);
  EXPECT_TRUE(any_contains(r.warnings, "case vm1-r-2-static-zram (static-zram): its completed outcome was overridden by "
                                       "the operator (harness mark-infra --override-outcome, attempt 2, by alice: host "
                                       "froze); original p99: compute 30.000 ms, sqlite 40.000 ms; analysed now as "
                                       "completed"));
  const auto& t4 = table(r, "table4_primary");
  const auto re = rows_of(t4, "original outcomes reinstated (1 overridden case(s))");
  ASSERT_EQ(re.size(), 4u);
  const double vm0 = (std::log(0.91) + std::log(0.92) + std::log(0.93)) / 3;
  const double vm1 = (std::log(0.91) + std::log(9200.0 / 30000.0) + std::log(0.93)) / 3;
  EXPECT_NEAR(re[0][column_index(t4, "ratio")].get<double>(), std::exp((vm0 + vm1) / 2), 1e-12);
  EXPECT_NEAR(rows_of(t4, "primary")[0][column_index(t4, "ratio")].get<double>(), std::exp(vm0), 1e-12);  // the rerun
  const auto& m = table(r, "mark_infra");
  ASSERT_EQ(m.rows.size(), 1u);
  EXPECT_EQ(m.rows[0][column_index(m, "previous_status")], "completed");
  EXPECT_EQ(m.rows[0][column_index(m, "original_p99")], "compute 30.000 ms, sqlite 40.000 ms");
  EXPECT_EQ(r.extra.at("overridden_cases").size(), 1u);
  expect_no_nan(r);
}

// An overridden lost case whose rerun has not run yet (infra_failed): reinstated as lost, imputed.
TEST(Sensitivity, OverriddenLostCaseAwaitingItsRerunIsReinstatedAsLost) {
  auto cases = golden::two_strata_three_repeats();
  cases[0].status = "infra_failed";  // vm0-r-1-static-zram: mark-infra set it, the rerun is pending
  const auto path = golden::written_db("sens_override_lost", cases);
  {
    results::Db db(path, results::Db::Mode::ReadWrite);
    db.exec("INSERT INTO attempts(case_id,attempt,status,kind,detail_json) VALUES "
            "('vm0-r-1-static-zram',1,'lost','run',NULL),"
            "('vm0-r-1-static-zram',2,'marked_infra','mark-infra','{\"reason\":\"partition\",\"previous_status\":\"lost\","
            "\"operator\":\"bob\",\"override_outcome\":true,\"original_outcome\":{\"status\":\"lost\",\"case\":"
            "{\"vm\":\"vm0\",\"regime\":\"r\",\"repeat\":1,\"triplet_id\":\"vm0/r/1\",\"configuration\":\"static-zram\"}}}')");
  }
  const auto data = analysis::load_campaign(path);
  const auto ts = analysis::build_triplets(data);
  EXPECT_EQ(ts.triplets.size(), 5u);  // the triplet waits for its rerun
  const auto r = analysis::build_analysis_report(data, ts, analysis::run_primary(ts, report_checks::small_bootstrap()));
  EXPECT_TRUE(any_contains(r.warnings, "its lost outcome was overridden"));
  EXPECT_TRUE(any_contains(r.warnings, "original p99: imputed (worst observed): compute 12.000 ms, sqlite 26.000 ms; "
                                       "analysed now as infra_failed"));
  const auto& t4 = table(r, "table4_primary");
  const auto re = rows_of(t4, "original outcomes reinstated");
  ASSERT_EQ(re.size(), 4u);
  EXPECT_EQ(re[0][column_index(t4, "triplets")], 6);
  const double vm0 = (std::log(9100.0 / 12000.0) + std::log(0.92) + std::log(0.93)) / 3;
  const double vm1 = (std::log(0.91) + std::log(0.92) + std::log(0.93)) / 3;
  EXPECT_NEAR(re[0][column_index(t4, "ratio")].get<double>(), std::exp((vm0 + vm1) / 2), 1e-12);
}

// Tables 5, 6 and the mechanism use every completed and lost case, complete triplet or not, and
// say how a lost case enters: with its imputed p99, never in wake, service, misses or counters.
TEST(SecondaryTables, EveryCompletedAndLostCaseCountsWithHowItEnters) {
  auto cases = golden::two_strata_three_repeats();
  cases[0].status = "lost";                       // vm0-r-1-static-zram
  cases.push_back({"vm1", "r", 4, "static-zram", 11000, 21000});  // its triplet's other members never ran
  const auto path = golden::written_db("secondary_all", cases);
  {
    results::Db db(path, results::Db::Mode::ReadWrite);  // per-request getrusage deltas
    db.exec("UPDATE canary_requests SET minflt = 1, majflt = 2, nvcsw = 3, nivcsw = 4");
  }
  const auto r = report_of(path);
  const auto& t5 = table(r, "table5_wake_service");
  // static-zram compute: 7 cases (6 + the incomplete triplet's), 1 lost, 6 measured, p99 from 7 (1 imputed).
  const auto& s = t5.rows[0];
  EXPECT_EQ(s[column_index(t5, "configuration")], "static-zram");
  EXPECT_EQ(s[column_index(t5, "cases")], 7);
  EXPECT_EQ(s[column_index(t5, "lost")], 1);
  EXPECT_EQ(s[column_index(t5, "measured_cases")], 6);
  EXPECT_EQ(s[column_index(t5, "response_p99_cases")], "7 (1)");
  EXPECT_EQ(s[column_index(t5, "requests_sum")], 6 * 101);  // lost case left out
  EXPECT_EQ(s[column_index(t5, "flagged_p99_censored_imputed")], "0 / 1");
  // p99 median over 10, 10, 10, 10, 10 (ms), 11 and the imputed 12: 10 ms.
  EXPECT_NEAR(s[column_index(t5, "response_p99_median_ms")].get<double>(), 10.0, 1e-9);
  const auto& t6 = table(r, "table6_regime_medians");
  EXPECT_EQ(t6.rows[0][column_index(t6, "cases")], 7);
  EXPECT_EQ(t6.rows[0][column_index(t6, "lost_imputed")], 1);
  const auto& m = table(r, "mechanism");
  EXPECT_EQ(m.rows[0][column_index(m, "cases")], 7);
  EXPECT_EQ(m.rows[0][column_index(m, "measured_cases")], 6);
  EXPECT_EQ(m.rows[1][column_index(m, "cases")], 6);
  const auto& f = table(r, "table5b_faults_context_switches");
  EXPECT_EQ(f.rows[0][column_index(f, "cases")], 7);
  EXPECT_EQ(f.rows[0][column_index(f, "measured_cases")], 6);
  // Per case: 101 pressure-phase requests (the warmup and recovery requests are outside).
  EXPECT_EQ(f.rows[0][column_index(f, "minor_faults_median")], 101);
  EXPECT_EQ(f.rows[0][column_index(f, "major_faults_sum")], 6 * 202);
  EXPECT_EQ(f.rows[0][column_index(f, "involuntary_switches_sum")], 6 * 404);
  EXPECT_EQ(f.rows[2][column_index(f, "voluntary_switches_median")], 303);  // delayed-activation, compute
  expect_no_nan(r);
}
