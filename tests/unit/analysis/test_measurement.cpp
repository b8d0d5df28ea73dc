// Reclaim execution and load / measurement-quality tables: exact per-configuration values from
// hand-built rows, the rate-shortfall and steal warnings naming the case, and "not measured" when
// a DB lacks the schema-v2 columns (dropped here to mimic a DB written before version 2).
#include "analysis/report/analysis_report.hpp"
#include "analysis/tables/outcome_tables.hpp"

#include "golden_db.hpp"
#include "results/db.hpp"
#include "tests/common/header_index.hpp"
#include "tests/unit/analysis/report_checks.hpp"

#include <gtest/gtest.h>

#include <cerrno>

namespace {

constexpr std::int64_t MiB = 1048576;

std::vector<golden::Case> base() {
  std::vector<golden::Case> v;
  for (int rep = 1; rep <= 2; ++rep)
    for (const char* vm : {"vm0", "vm1"}) {
      v.push_back({vm, "r", rep, "static-zram", 10000, 20000});
      v.push_back({vm, "r", rep, "delayed-activation", 12000, 26000});
      v.push_back({vm, "r", rep, "bounded-reclaim", 9000, 19000});
    }
  // Golden case time: warmup 1 s + pressure 10.1 s + recovery 1 s = 12.1 s; 1% = 121,000 us.
  for (auto& c : v)
    c.outcome_json = R"({"load":{"nominal_rate_mib_s":32,"achieved_rate_mib_s":30,"episode":{"fraction_of_pressure":0.5}},
                        "steal":{"total_us":100000},"harness_self":{"cpu_ns":2000000000,"peak_rss_kib":10000},
                        "trigger":{"since_pressure_start_ns":3000000000}})";
  // vm0-r-1-static-zram: 12.5% below nominal; vm1-r-1-static-zram: steal 200,000 us = 1.65% of 12.1 s.
  v[0].outcome_json = R"({"load":{"nominal_rate_mib_s":32,"achieved_rate_mib_s":28},"steal":{"total_us":100000},
                         "trigger":{"since_pressure_start_ns":5000000000}})";
  v[3].outcome_json = R"({"load":{"nominal_rate_mib_s":32,"achieved_rate_mib_s":30},"steal":{"total_us":200000}})";
  return v;
}

void add_rows(const std::string& path) {
  results::Db db(path, results::Db::Mode::ReadWrite);
  // Reclaim writes: 96 MiB requested; across the write 110 and 100 MiB, concurrent 20 and 0 MiB.
  results::Stmt ra(db, "INSERT INTO reclaim_actions(case_id,requested_bytes,start_ns,end_ns,duration_ns,write_errno,"
                       "achieved_bytes,concurrent_estimate_bytes,achieved_conservative_bytes,achieved_counter) "
                       "VALUES(?1,?2,13000000000,?3,?4,?5,?6,?7,?8,'pgsteal')");
  ra.bind(1, "vm0-r-1-bounded-reclaim").bind(2, 96 * MiB).bind(3, std::int64_t{13'250'000'000}).bind(4, std::int64_t{250'000'000})
      .bind(5, 0).bind(6, 110 * MiB).bind(7, 20 * MiB).bind(8, 90 * MiB).run();
  ra.bind(1, "vm1-r-1-bounded-reclaim").bind(2, 96 * MiB).bind(3, std::int64_t{13'750'000'000}).bind(4, std::int64_t{750'000'000})
      .bind(5, EAGAIN).bind(6, 100 * MiB).bind(7, std::int64_t{0}).bind(8, 100 * MiB).run();
  // Controller windows of one delayed case: 3 judged, 1 irregular.
  db.exec("INSERT INTO controller_events(case_id,t_ns,kind,window_ns,irregular) VALUES "
          "('vm0-r-1-delayed-activation',11000000000,'window',1000000000,0),"
          "('vm0-r-1-delayed-activation',12000000000,'window',1300000000,1),"
          "('vm0-r-1-delayed-activation',13000000000,'window',1000000000,0)");
}

using report_checks::table;

/// golden::written_db(stem, cases) with add_rows: the DB every test here reads; its path.
std::string measured_db(const std::string& stem, const std::vector<golden::Case>& cases = base()) {
  const auto path = golden::written_db(stem, cases);
  add_rows(path);
  return path;
}

analysis::Report report(const std::string& path) {
  const auto data = analysis::load_campaign(path);
  const auto ts = analysis::build_triplets(data);
  analysis::PrimaryOptions o;
  o.bootstrap = {2000, 1, 1};
  return analysis::build_analysis_report(data, ts, analysis::run_primary(ts, o));
}

}  // namespace

TEST(Measurement, ReclaimExecutionTableIsExactAndUnclipped) {
  const auto r = report(measured_db("reclaim_exec"));
  const auto& t = table(r, "reclaim_execution");
  const auto& b = t.rows.at(2);
  EXPECT_EQ(b[0], "bounded-reclaim");
  EXPECT_EQ(b[5], 2);                                    // writes
  EXPECT_DOUBLE_EQ(b[6].get<double>(), 500.0);           // duration median (250 + 750) / 2 ms
  EXPECT_DOUBLE_EQ(b[7].get<double>(), 750.0);           // duration max
  EXPECT_EQ(b[8], "0 (success): 1; 11 EAGAIN: 1");       // errno counts
  EXPECT_DOUBLE_EQ(b[10].get<double>(), 105.0);          // achieved across write median (110 + 100) / 2 MiB
  EXPECT_DOUBLE_EQ(b[11].get<double>(), 10.0);           // concurrent estimate median MiB
  EXPECT_DOUBLE_EQ(b[12].get<double>(), 95.0);           // conservative median MiB
  EXPECT_DOUBLE_EQ(b[15].get<double>(), 110.0 / 96.0);   // over-reclaim ratio max, not clipped at 1
  const auto& s = t.rows.at(0);
  EXPECT_EQ(s[5], 0);
  EXPECT_EQ(s[6], "no write");
  EXPECT_DOUBLE_EQ(s[3].get<double>(), 3.0);   // trigger delay median: 3 of 4 static cases at 3 s, one at 5 s
  EXPECT_DOUBLE_EQ(s[4].get<double>(), 5.0);
  EXPECT_EQ(s[2], 3);  // vm1-r-1-static-zram records no trigger
}

TEST(Measurement, RateShortfallAndStealAreFlaggedByName) {
  const auto r = report(measured_db("quality"));
  const auto& q = table(r, "measurement_quality");
  EXPECT_EQ(q.rows[0][4], 1);  // static: one case > 10% below nominal
  EXPECT_EQ(q.rows[0][8], 1);  // static: one case with steal > 1%
  EXPECT_EQ(q.rows[1][4], 0);
  EXPECT_EQ(q.rows[1][6], 1);  // delayed: irregular windows
  EXPECT_EQ(q.rows[1][7], 3);  // judged windows
  EXPECT_EQ(q.rows[0][6], "not measured");
  EXPECT_DOUBLE_EQ(q.rows[2][10].get<double>(), 2.0);  // harness self cpu median, s
  bool rate = false, steal = false;
  for (const auto& w : r.warnings) {
    rate = rate || (w.find("1 case(s) allocated more than 10% below the nominal rate") != std::string::npos &&
                    w.find("vm0-r-1-static-zram (28.0 of 32.0 MiB/s)") != std::string::npos);
    steal = steal || w.find("vm1-r-1-static-zram (1.65% of 12 s)") != std::string::npos;
  }
  EXPECT_TRUE(rate);
  EXPECT_TRUE(steal);
}

TEST(Measurement, PreVersion2ColumnsAbsentAreNotMeasured) {
  auto cases = base();
  for (auto& c : cases) c.outcome_json.clear();
  const auto path = measured_db("pre_v2", cases);
  {
    results::Db db(path, results::Db::Mode::ReadWrite);
    // controller_events without irregular, as before version 2 (since version 5 it is a view
    // over controller_events_rows: the view is redefined without the column).
    db.exec("DROP VIEW controller_events");
    db.exec("CREATE VIEW controller_events AS SELECT c.case_id AS case_id, r.t_ns AS t_ns, r.kind AS kind, "
            "r.some_total_us AS some_total_us, r.delta_us AS delta_us, r.counting AS counting, "
            "r.consecutive AS consecutive, r.detail_json AS detail_json, r.window_ns AS window_ns "
            "FROM controller_events_rows r JOIN cases c ON c.case_key = r.case_key");
    db.exec("ALTER TABLE reclaim_actions DROP COLUMN achieved_conservative_bytes");
    db.exec("ALTER TABLE reclaim_actions DROP COLUMN concurrent_estimate_bytes");
    db.exec("ALTER TABLE reclaim_actions DROP COLUMN achieved_counter");
  }
  const auto r = report(path);
  const auto& q = table(r, "measurement_quality");
  EXPECT_EQ(q.rows[1][6], "not measured");
  EXPECT_EQ(q.rows[1][3], "not measured");
  const auto& b = table(r, "reclaim_execution").rows.at(2);
  EXPECT_EQ(b[5], 2);
  EXPECT_EQ(b[11], "not measured");  // concurrent estimate
  EXPECT_EQ(b[12], "not measured");  // conservative
  EXPECT_DOUBLE_EQ(b[10].get<double>(), 105.0);
  EXPECT_EQ(table(r, "outcome_counts").rows[0][6], "not measured");  // OOM kills bg
}

TEST(Measurement, ReclaimExecutionReportsTheWindowRulesCounterfactual) {
  auto cases = base();
  // Delayed cases (indices 1, 4, 7, 10): one fired at 6 s and would have at 3.5 s without the
  // window rule; one never fired but would have at 4 s; two recorded that the rule delayed nothing.
  cases[1].outcome_json = R"({"trigger":{"fired":true,"t_ns":8000000000,"since_pressure_start_ns":6000000000,
                              "irregular_windows":1,"earlier_without_length_rule_t_ns":5500000000}})";
  cases[4].outcome_json = R"({"trigger":{"fired":false,"irregular_windows":3,
                              "earlier_without_length_rule_t_ns":14000000000}})";
  cases[7].outcome_json = R"({"trigger":{"fired":true,"t_ns":5000000000,"since_pressure_start_ns":3000000000,
                              "earlier_without_length_rule_t_ns":null}})";
  cases[10].outcome_json = R"({"trigger":{"fired":true,"t_ns":5000000000,"since_pressure_start_ns":3000000000,
                               "earlier_without_length_rule_t_ns":null}})";
  const auto r = report(measured_db("reclaim_exec_cf", cases));
  const auto& t = table(r, "reclaim_execution");
  const auto& d = t.rows.at(1);
  ASSERT_EQ(d[0], "delayed-activation");
  EXPECT_EQ(d[16], 1);  // irregular windows (controller_events of vm0-r-1-delayed-activation)
  EXPECT_EQ(d[17], 4);  // cases that recorded the counterfactual
  EXPECT_EQ(d[18], 2);  // fired earlier without the rule
  EXPECT_EQ(d[19], 1);  // never fired with it
  EXPECT_DOUBLE_EQ(d[20].get<double>(), 2.5);  // 6 s - 3.5 s
  EXPECT_DOUBLE_EQ(d[21].get<double>(), 2.5);
  // Static cases were written without the counterfactual (older bundles): not measured.
  const auto& s = t.rows.at(0);
  EXPECT_EQ(s[17], 0);
  EXPECT_EQ(s[18], "not measured");
  EXPECT_EQ(s[20], "not measured");
}

using test_support::header_index;

TEST(Measurement, MechanismShowsCpuAndIoStallAndTheWriteCpuBesideTheMemoryStall) {
  const auto path = measured_db("mech_cpu_io");
  {
    results::Db db(path, results::Db::Mode::ReadWrite);
    // Two samples of the pressure phase [10 s, 20.1 s) per case; totals in us.
    results::Stmt t(db, "INSERT INTO telemetry(case_id, t_ns, bg_some_us, bg_cpu_some_us, fg_cpu_some_us, "
                        "sys_cpu_some_us, bg_io_some_us, fg_io_some_us, sys_io_some_us, sys_io_full_us, "
                        "bg_full_us, fg_some_us, fg_full_us, sys_some_us, sys_full_us) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
    const char* reclaim[] = {"vm0-r-1-bounded-reclaim", "vm1-r-1-bounded-reclaim"};
    for (int i = 0; i < 2; ++i) {
      const std::int64_t k = i + 1;  // case 1: 1x, case 2: 2x the stalls below
      t.bind_all(std::string(reclaim[i]), std::int64_t{10'000'000'000}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0).run();
      // Memory stall: bg some 1 s, bg full 0.8 s, fg some 0.4 s, fg full 0.2 s, system some
      // 1.2 s (bg's and fg's overlap), system full 0.1 s (times k).
      t.bind_all(std::string(reclaim[i]), std::int64_t{20'000'000'000}, k * 1'000'000, k * 2'000'000, k * 3'000'000,
                 k * 4'000'000, k * 500'000, k * 250'000, k * 100'000, k * 50'000, k * 800'000, k * 400'000,
                 k * 200'000, k * 1'200'000, k * 100'000)
          .run();
    }
    db.exec("UPDATE reclaim_actions SET write_cpu_us = 180000 WHERE case_id = 'vm0-r-1-bounded-reclaim'");
    db.exec("UPDATE reclaim_actions SET write_cpu_us = 220000 WHERE case_id = 'vm1-r-1-bounded-reclaim'");
  }
  const auto r = report(path);
  const auto& m = table(r, "mechanism");
  const auto& b = m.rows.at(2);
  ASSERT_EQ(b[0], "bounded-reclaim");
  // Medians over the two cases with telemetry (1x and 2x): 1.5x.
  EXPECT_DOUBLE_EQ(b[header_index(m, "bg PSI some stall (s)")].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(b[header_index(m, "bg PSI full stall (s)")].get<double>(), 1.2);
  EXPECT_DOUBLE_EQ(b[header_index(m, "fg PSI some stall (s)")].get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(b[header_index(m, "fg PSI full stall (s)")].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(b[header_index(m, "system PSI some stall (s)")].get<double>(), 1.8);
  EXPECT_DOUBLE_EQ(b[header_index(m, "system PSI full stall (s)")].get<double>(), 0.15);
  // The study's figures name no owner: their own columns, never labelled bg.
  EXPECT_DOUBLE_EQ(b[header_index(m, "study: PSI some, owner not stated (s)")].get<double>(), 1.342);
  EXPECT_DOUBLE_EQ(b[header_index(m, "study: PSI full, owner not stated (s)")].get<double>(), 1.114);
  EXPECT_DOUBLE_EQ(b[header_index(m, "bg CPU PSI some (s)")].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(b[header_index(m, "fg CPU PSI some (s)")].get<double>(), 4.5);
  EXPECT_DOUBLE_EQ(b[header_index(m, "system CPU PSI some (s)")].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(b[header_index(m, "bg IO PSI some (s)")].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(b[header_index(m, "fg IO PSI some (s)")].get<double>(), 0.375);
  EXPECT_DOUBLE_EQ(b[header_index(m, "system IO PSI some (s)")].get<double>(), 0.15);
  EXPECT_DOUBLE_EQ(b[header_index(m, "system IO PSI full (s)")].get<double>(), 0.075);
  EXPECT_DOUBLE_EQ(b[header_index(m, "memory.reclaim write CPU (ms)")].get<double>(), 200.0);
  EXPECT_EQ(m.rows.at(0)[header_index(m, "memory.reclaim write CPU (ms)")], "no write");
  // The memory stall columns (bg, fg, system; some and full) sit right before the cpu/io ones.
  EXPECT_EQ(header_index(m, "bg CPU PSI some (s)"), header_index(m, "system PSI full stall (s)") + 1);
  EXPECT_EQ(header_index(m, "system PSI some stall (s)"), header_index(m, "fg PSI full stall (s)") + 1);
}
