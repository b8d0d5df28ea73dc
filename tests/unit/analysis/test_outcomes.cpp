// Every case keeps its outcome (docs/PROTOCOL.md): a canary killed mid-phase (truncated trace), an
// OOM kill in one member, and a lost case after the pressure start each keep their triplet, are
// counted in the outcome table, never produce NaN, and enter the p99 with the exact censored or
// imputed value derived by hand from the golden timeline (golden_db.hpp).
#include "analysis/report/analysis_report.hpp"
#include "analysis/tables/outcome_tables.hpp"

#include "golden_db.hpp"
#include "results/db.hpp"

#include <gtest/gtest.h>

#include "report_checks.hpp"

#include <algorithm>
#include <cmath>

namespace {

/// The shared two-strata dataset with OOM counters measured (outcome_json: none killed).
std::vector<golden::Case> base() {
  auto v = golden::two_strata_three_repeats();
  for (auto& c : v) c.outcome_json = R"({"oom_kills":{"bg":0,"fg":0}})";
  return v;
}

const analysis::CaseSummary& find(const analysis::CampaignData& d, const std::string& id) {
  auto it = std::find_if(d.cases.begin(), d.cases.end(), [&](const auto& c) { return c.case_id == id; });
  if (it == d.cases.end()) throw std::runtime_error("no case " + id);
  return *it;
}

using report_checks::table;

using report_checks::expect_no_nan;
analysis::PrimaryOptions opts() { return report_checks::small_bootstrap(); }

// Row of a per-configuration table: 0 static, 1 delayed, 2 reclaim.
const std::vector<nlohmann::json>& row(const analysis::Table& t, int config) { return t.rows.at(config); }

}  // namespace

TEST(Outcomes, CanaryKilledMidPhaseIsCensoredAtTheRestorationStart) {
  auto cases = base();
  cases[0].truncate_at = 90;  // vm0-r-1-static-zram compute: request 90 in flight, 91..100 never recorded
  const auto path = golden::written_db("truncated", cases);
  const auto data = analysis::load_campaign(path);
  const auto& l = *find(data, "vm0-r-1-static-zram").latency[0];
  EXPECT_EQ(l.requests, 101u);
  EXPECT_EQ(l.incomplete, 1u);
  EXPECT_EQ(l.missing, 10u);
  EXPECT_EQ(l.censored, 11u);
  EXPECT_TRUE(l.truncated);
  EXPECT_EQ(l.deadline_misses, 11u);
  // 90 completed values (<= 10.1 ms) then 11 censored ones: 21.1 s - (10 s + i x 0.1 s) for
  // i = 100..90 = 1.1, 1.2, ..., 2.1 s. Type-7 p99 of 101 values = x[99] = the 10th censored = 2.0 s.
  EXPECT_DOUBLE_EQ(l.p99_us, 2'000'000.0);
  EXPECT_TRUE(l.p99_flagged());
  const auto ts = analysis::build_triplets(data);
  EXPECT_EQ(ts.triplets.size(), 6u);  // the triplet stays
  EXPECT_TRUE(ts.incomplete.empty());
  const auto r = analysis::build_analysis_report(data, ts, analysis::run_primary(ts, opts()));
  const auto& t = table(r, "outcome_counts");
  EXPECT_EQ(row(t, 0)[2], 11);  // censored compute requests, static
  EXPECT_EQ(row(t, 0)[3], 0);   // censored sqlite requests, static
  EXPECT_EQ(row(t, 0)[4], 1);   // cases with a truncated trace
  EXPECT_EQ(row(t, 0)[5], 1);   // cases with a censored p99
  EXPECT_EQ(row(t, 1)[4], 0);
  expect_no_nan(r);
}

TEST(Outcomes, OomInOneMemberKeepsTheTripletAndIsCounted) {
  auto cases = base();
  // vm1-r-2-bounded-reclaim: the fg OOM kill took the sqlite canary down before request 50.
  auto& c = cases[11];
  ASSERT_EQ(c.vm + c.configuration + std::to_string(c.repeat), "vm1bounded-reclaim2");
  c.outcome_json = R"({"oom_kills":{"bg":2,"fg":1}})";
  c.truncate_canary = 1;
  c.truncate_at = 50;
  c.in_flight_at_kill = false;
  const auto path = golden::written_db("oom", cases);
  const auto data = analysis::load_campaign(path);
  const auto& l = *find(data, "vm1-r-2-bounded-reclaim").latency[1];
  EXPECT_EQ(l.missing, 51u);
  EXPECT_EQ(l.incomplete, 0u);
  // 50 completed values then 51 censored: 11.1 s - i x 0.1 s for i = 100..50 = 1.1 .. 6.1 s;
  // x[99] = censored number 49 (0-based) = 1.1 + 4.9 = 6.0 s.
  EXPECT_DOUBLE_EQ(l.p99_us, 6'000'000.0);
  const auto ts = analysis::build_triplets(data);
  EXPECT_EQ(ts.triplets.size(), 6u);
  const auto pr = analysis::run_primary(ts, opts());
  // sqlite reclaim/static: the vm1/r/2 log ratio is ln(6e6 / 20000), the others ln(19000 / 20000).
  const double d = std::log(19000.0 / 20000.0), big = std::log(6e6 / 20000.0);
  EXPECT_NEAR(pr.comparisons[2].estimate, std::exp(0.5 * (d + (2 * d + big) / 3.0)), 1e-12);
  const auto r = analysis::build_analysis_report(data, ts, pr);
  const auto& t = table(r, "outcome_counts");
  EXPECT_EQ(row(t, 2)[6], 2);   // OOM kills bg, bounded-reclaim
  EXPECT_EQ(row(t, 2)[7], 1);   // OOM kills fg
  EXPECT_EQ(row(t, 2)[3], 51);  // censored sqlite requests
  EXPECT_EQ(row(t, 0)[6], 0);   // static: measured, none
  expect_no_nan(r);
}

TEST(Outcomes, OomCountsNotMeasuredWithoutOutcomeJson) {
  auto cases = base();
  for (auto& c : cases) c.outcome_json.clear();
  const auto path = golden::written_db("no_outcome", cases);
  const auto data = analysis::load_campaign(path);
  const auto ts = analysis::build_triplets(data);
  const auto r = analysis::build_analysis_report(data, ts, analysis::run_primary(ts, opts()));
  const auto& t = table(r, "outcome_counts");
  EXPECT_EQ(row(t, 0)[6], "not measured");
  EXPECT_EQ(row(t, 0)[7], "not measured");
  EXPECT_EQ(table(r, "measurement_quality").rows[0][3], "not measured");
}

TEST(Outcomes, LostCaseAfterPressureStartIsImputedWorstObserved) {
  auto cases = base();
  cases[0].status = "lost";  // vm0-r-1-static-zram
  cases[0].outcome_json = R"({"lost":{"phase":"pressure","last_seen_unix_ns":1}})";
  const auto path = golden::written_db("lost", cases);
  {  // audit trail: the lost attempt, a rerun after an infra failure, an operator reclassification
    results::Db db(path, results::Db::Mode::ReadWrite);
    db.exec("INSERT INTO attempts(case_id,attempt,status,kind,detail_json) VALUES "
            "('vm0-r-1-static-zram',1,'lost','run','{\"phase\":\"pressure\"}'),"
            "('vm1-r-1-delayed-activation',1,'infra_failed','run',NULL),"
            "('vm1-r-1-delayed-activation',2,'completed','run',NULL),"
            "('vm1-r-3-bounded-reclaim',1,'completed','run',NULL),"
            "('vm1-r-3-bounded-reclaim',2,'marked_infra','mark-infra','{\"reason\":\"host rebooted\",\"previous_status\":\"completed\"}')");
  }
  const auto data = analysis::load_campaign(path);
  const auto& lost = find(data, "vm0-r-1-static-zram");
  ASSERT_TRUE(lost.lost());
  ASSERT_TRUE(lost.latency[0] && lost.latency[1]);
  // Largest p99 among completed cases: compute 12000 (delayed), sqlite 26000 (delayed).
  EXPECT_DOUBLE_EQ(lost.latency[0]->p99_us, 12000.0);
  EXPECT_DOUBLE_EQ(lost.latency[1]->p99_us, 26000.0);
  EXPECT_TRUE(lost.latency[0]->imputed);
  ASSERT_EQ(lost.outcome.lost_phase.value_or(""), "pressure");
  const auto ts = analysis::build_triplets(data);
  EXPECT_EQ(ts.triplets.size(), 6u);  // the lost case's triplet stays
  const auto pr = analysis::run_primary(ts, opts());
  // compute reclaim/static: vm0 stratum ln(9100/12000), ln(.92), ln(.93); vm1 ln(.91), ln(.92), ln(.93).
  const double vm0 = (std::log(9100.0 / 12000.0) + std::log(0.92) + std::log(0.93)) / 3.0;
  const double vm1 = (std::log(0.91) + std::log(0.92) + std::log(0.93)) / 3.0;
  EXPECT_NEAR(pr.comparisons[0].estimate, std::exp(0.5 * (vm0 + vm1)), 1e-12);
  const auto r = analysis::build_analysis_report(data, ts, pr);
  const auto& t = table(r, "outcome_counts");
  EXPECT_EQ(row(t, 0)[8], 1);  // lost cases, static
  EXPECT_EQ(row(t, 0)[9], 2);  // imputed p99 values (one per canary)
  EXPECT_EQ(row(t, 1)[8], 0);
  // configuration, attempts, infra, lost, reruns, in flight, interrupted, operator actions
  const auto& a = table(r, "attempts");
  EXPECT_EQ(a.rows[0], (std::vector<nlohmann::json>{"static-zram", 1, 0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(a.rows[1], (std::vector<nlohmann::json>{"delayed-activation", 2, 1, 0, 1, 0, 0, 0}));
  EXPECT_EQ(a.rows[2], (std::vector<nlohmann::json>{"bounded-reclaim", 1, 0, 0, 0, 0, 0, 1}));  // the mark is no attempt
  const auto& m = table(r, "mark_infra");
  ASSERT_EQ(m.rows.size(), 1u);
  EXPECT_EQ(m.rows[0][0], "vm1-r-3-bounded-reclaim");
  EXPECT_EQ(m.rows[0][3], "mark-infra");
  EXPECT_EQ(m.rows[0][4], "host rebooted");
  EXPECT_NE(analysis::render_markdown(r).find("1 lost case(s)"), std::string::npos);
  expect_no_nan(r);
}

TEST(Outcomes, TripletWithAMemberNeverRunIsIncompleteAndListed) {
  auto cases = base();
  cases[1].status = "infra_failed";  // vm0-r-1-delayed-activation: retries exhausted
  const auto path = golden::written_db("incomplete", cases);
  {
    results::Db db(path, results::Db::Mode::ReadWrite);
    db.exec("UPDATE schedule SET triplet_id = 'vm0/r/1', configuration = 'delayed-activation', state = 'infra_failed' "
            "WHERE case_id = 'vm0-r-1-delayed-activation'");
  }
  const auto data = analysis::load_campaign(path);
  const auto ts = analysis::build_triplets(data);
  EXPECT_EQ(ts.triplets.size(), 5u);
  ASSERT_EQ(ts.incomplete.size(), 1u);
  EXPECT_EQ(ts.incomplete[0].id, "vm0/r/1");
  EXPECT_EQ(ts.incomplete[0].never_run, (std::vector<std::string>{"delayed-activation (vm0-r-1-delayed-activation: infra_failed)"}));
  const auto r = analysis::build_analysis_report(data, ts, analysis::run_primary(ts, opts()));
  EXPECT_EQ(row(table(r, "outcome_counts"), 1)[10], 1);
  EXPECT_EQ(row(table(r, "outcome_counts"), 0)[10], 0);
}
