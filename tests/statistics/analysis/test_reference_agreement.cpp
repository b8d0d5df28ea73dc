// Agreement with the independent NumPy implementation analysis/reference/bootstrap_ref.py on the
// same synthetic campaign DB (5 VMs x 4 regimes x 3 triplets = 60 triplets, 180 cases), and on a
// smaller one given every outcome docs/PROTOCOL.md defines (censored requests, truncated traces,
// seq gaps, an empty trace, lost cases): per-case p99, outcome counts per configuration, Table 4.
//  - point estimates equal to 1e-12 (relative);
//  - interval bounds within Monte Carlo tolerance. The two use different generators (mt19937_64 vs
//    PCG64), so each bound is an independent estimate of the same bootstrap quantile. For the
//    a = 0.00625 quantile of B replicates the standard error is about sqrt(a(1-a)/B) / phi(z_a) x sd
//    (normal approximation; sd = bootstrap sd on the log scale); the difference of two has sqrt(2)
//    times that. Tolerance: 5 such standard errors on the log scale (B = 20000: 0.22 sd).
#include "analysis/report/analysis_report.hpp"
#include "analysis/data/campaign_data.hpp"
#include "analysis/tables/outcome_tables.hpp"
#include "analysis/tables/primary.hpp"
#include "analysis/report/report_table.hpp"
#include "analysis/simulate/synthetic.hpp"
#include "analysis/data/triplets.hpp"
#include "results/db.hpp"
#include "tests/common/header_index.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

namespace {
std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  EXPECT_EQ(rc, 0) << cmd;
  return out;
}
}  // namespace

TEST(ReferenceAgreement, PointEstimatesExactBoundsWithinMonteCarloTolerance) {
  const auto dir = std::filesystem::temp_directory_path() / ("hk_analysis_stat_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "agree.db").string();
  const analysis::SyntheticOptions o{.seed = 2024, .vms = 5, .triplets_per_stratum = 3, .case_sd = 0.08, .pressure_s = 30};
  analysis::write_synthetic_campaign(db, o);

  const int B = 20000;
  const std::uint64_t seed = 11;
  const auto data = analysis::load_campaign(db);
  const auto ts = analysis::build_triplets(data);
  ASSERT_EQ(ts.triplets.size(), 60u);
  analysis::PrimaryOptions opt;
  opt.bootstrap = {B, seed, 2};
  const auto pr = analysis::run_primary(ts, opt);

  const std::string cmd = "/usr/bin/python3 " HARNESS_SOURCE_DIR "/analysis/reference/bootstrap_ref.py " + db +
                          " --replicates " + std::to_string(B) + " --seed " + std::to_string(seed);
  const auto j = nlohmann::json::parse(run(cmd));
  ASSERT_EQ(j["triplets"].get<int>(), 60);
  const double a = (1 - pr.level) / 2;
  const double z = 2.4977054744;  // Phi^-1(1 - 0.00625)
  const double phi = std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
  const double se_sd = std::sqrt(a * (1 - a) / B) / phi;  // per sd of the replicate distribution
  for (int k = 0; k < 4; ++k) {
    const auto& c = pr.comparisons[k];
    const double py_est = j["estimate"][k].get<double>();
    EXPECT_NEAR(c.estimate / py_est, 1.0, 1e-12) << c.label;
    const double sd = j["log_sd"][k].get<double>();
    const double tol = 5 * std::sqrt(2.0) * se_sd * sd;
    auto check = [&](double cpp, const char* key) {
      const double d = std::abs(std::log(cpp) - std::log(j[key][k].get<double>()));
      EXPECT_LE(d, tol) << c.label << " " << key << ": C++ " << cpp << " NumPy " << j[key][k].get<double>();
      return d / (std::sqrt(2.0) * se_sd * sd);
    };
    const double zl = check(c.lower, "lower"), zu = check(c.upper, "upper");
    const double zcl = check(c.corrected_lower, "corrected_lower"), zcu = check(c.corrected_upper, "corrected_upper");
    std::printf("%-28s est C++ %.15f NumPy %.15f | lower %.5f vs %.5f (%.2f SE) | upper %.5f vs %.5f (%.2f SE) | "
                "corrected %.2f / %.2f SE | tol %.5f (log)\n",
                c.label.c_str(), c.estimate, py_est, c.lower, j["lower"][k].get<double>(), zl, c.upper,
                j["upper"][k].get<double>(), zu, zcl, zcu, tol);
  }
  std::filesystem::remove_all(dir);
}

namespace {
/// Case ids of `configuration` in case_id order, `n` of them from the `skip`-th on.
std::vector<std::string> pick(results::Db& db, const std::string& configuration, int skip, int n) {
  results::Stmt q(db, "SELECT case_id FROM cases WHERE configuration = ?1 ORDER BY case_id LIMIT ?2 OFFSET ?3");
  q.bind(1, configuration).bind(2, n).bind(3, skip);
  std::vector<std::string> v;
  while (q.step()) v.push_back(q.text(0));
  EXPECT_EQ(v.size(), static_cast<std::size_t>(n)) << configuration;
  return v;
}
void exec(results::Db& db, const std::string& sql, const std::string& id) {
  results::Stmt q(db, sql);
  q.bind(1, id);
  q.run();
}
}  // namespace

// docs/PROTOCOL.md outcomes written into a synthetic DB (3 VMs x 4 regimes x 3 triplets):
//   censored: 4 bounded-reclaim cases lose the completion of every 40th pressure-phase compute request;
//   truncated: 3 static-zram cases' SQLite traces end 20 s into the 30 s pressure phase;
//   seq gap: 2 delayed-activation cases miss 25 compute requests in the middle of the phase;
//   empty trace: 1 delayed-activation case recorded no SQLite request at all;
//   lost: one case of each configuration (different triplets) has no trace, phases or telemetry.
// The reference and the product agree on every case's p99 (1e-9 relative), on the outcome counts
// per configuration, on the triplets kept and on Table 4.
TEST(ReferenceAgreement, CensoredTruncatedAndLostCasesAgreeCaseByCaseAndInTable4) {
  const auto dir = std::filesystem::temp_directory_path() / ("hk_analysis_outcomes_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "outcomes.db").string();
  const analysis::SyntheticOptions o{.seed = 77, .vms = 3, .triplets_per_stratum = 3, .case_sd = 0.08, .pressure_s = 30};
  analysis::write_synthetic_campaign(db, o);
  std::vector<std::string> lost;
  {
    results::Db w(db, results::Db::Mode::ReadWrite);
    const std::string in_pressure =
        " AND scheduled_ns >= (SELECT start_ns FROM phases p WHERE p.case_id = ?1 AND p.phase = 'pressure')"
        " AND scheduled_ns < (SELECT end_ns FROM phases p WHERE p.case_id = ?1 AND p.phase = 'pressure')";
    for (const auto& id : pick(w, "bounded-reclaim", 0, 4))
      exec(w, "UPDATE canary_requests SET completion_ns = NULL, wake_ns = NULL WHERE case_id = ?1 AND "
              "canary = 'compute' AND seq % 40 = 7" + in_pressure, id);
    for (const auto& id : pick(w, "static-zram", 0, 3))
      exec(w, "DELETE FROM canary_requests WHERE case_id = ?1 AND canary = 'sqlite' AND scheduled_ns >= "
              "(SELECT start_ns + 20000000000 FROM phases p WHERE p.case_id = ?1 AND p.phase = 'pressure')", id);
    for (const auto& id : pick(w, "delayed-activation", 0, 2))
      exec(w, "DELETE FROM canary_requests WHERE case_id = ?1 AND canary = 'compute' AND seq IN "
              "(SELECT seq FROM canary_requests WHERE case_id = ?1 AND canary = 'compute'" + in_pressure +
              " ORDER BY seq LIMIT 25 OFFSET 100)", id);
    for (const auto& id : pick(w, "delayed-activation", 2, 1))
      exec(w, "DELETE FROM canary_requests WHERE case_id = ?1 AND canary = 'sqlite'", id);
    // One lost case per configuration, in three different triplets (ids sort by vm, regime, repeat).
    lost = {pick(w, "static-zram", 10, 1)[0], pick(w, "delayed-activation", 20, 1)[0], pick(w, "bounded-reclaim", 30, 1)[0]};
    for (const auto& id : lost) {
      exec(w, "UPDATE cases SET status = 'lost', error = 'agent lost (test)', outcome_json = NULL WHERE case_id = ?1", id);
      exec(w, "UPDATE schedule SET state = 'lost' WHERE case_id = ?1", id);
      for (const char* t : {"canary_requests", "phases", "telemetry", "controller_events", "reclaim_actions", "restoration"})
        exec(w, std::string("DELETE FROM ") + t + " WHERE case_id = ?1", id);
    }
  }

  const auto data = analysis::load_campaign(db);
  const auto ts = analysis::build_triplets(data);
  ASSERT_EQ(ts.triplets.size(), 36u) << "a triplet was dropped for its outcome";
  const int B = 20000;
  const std::uint64_t seed = 5;
  analysis::PrimaryOptions opt;
  opt.bootstrap = {B, seed, 2};
  const auto pr = analysis::run_primary(ts, opt);
  const auto j = nlohmann::json::parse(run("/usr/bin/python3 " HARNESS_SOURCE_DIR "/analysis/reference/bootstrap_ref.py " +
                                           db + " --replicates " + std::to_string(B) + " --seed " + std::to_string(seed)));
  ASSERT_EQ(j["triplets"].get<int>(), 36);

  // Every case's p99, censored, truncated and imputed ones included.
  int flagged = 0;
  ASSERT_EQ(data.cases.size(), 108u);
  for (const auto& c : data.cases) {
    ASSERT_TRUE(j["case_p99"].contains(c.case_id)) << c.case_id;
    const auto& r = j["case_p99"][c.case_id];
    EXPECT_EQ(r["imputed"].get<bool>(), c.lost()) << c.case_id;
    for (int k = 0; k < 2; ++k) {
      const char* can = k == 0 ? "compute" : "sqlite";
      ASSERT_TRUE(c.latency[k].has_value()) << c.case_id << " " << can;
      ASSERT_TRUE(r[can].is_number()) << c.case_id << " " << can << ": " << r.dump();
      EXPECT_NEAR(c.latency[k]->p99_us / r[can].get<double>(), 1.0, 1e-9) << c.case_id << " " << can;
      flagged += c.latency[k]->p99_flagged() ? 1 : 0;
    }
  }
  EXPECT_GE(flagged, 4 + 3 + 2 + 1 + 6) << "the outcomes written above did not all reach the analysis";

  // The outcome counts per configuration, as the report prints them.
  const auto table = analysis::outcome_counts_table(data, ts);
  auto col = [&](const std::string& header) { return test_support::header_index(table, header); };
  ASSERT_EQ(table.rows.size(), 3u);
  for (const auto& row : table.rows) {
    const std::string conf = row[col("configuration")].get<std::string>();
    SCOPED_TRACE(conf);
    const auto& ref = j["counts"][conf];
    EXPECT_EQ(row[col("cases")].get<int>(), ref["completed"].get<int>() + ref["lost"].get<int>());
    EXPECT_EQ(row[col("lost cases")].get<int>(), ref["lost"].get<int>());
    EXPECT_EQ(ref["lost"].get<int>(), 1);
    EXPECT_EQ(row[col("imputed p99 values")].get<int>(), ref["imputed_p99"].get<int>());
    EXPECT_EQ(ref["imputed_p99"].get<int>(), 2);
    EXPECT_EQ(row[col("censored requests, compute")].get<long long>(), ref["censored_requests"]["compute"].get<long long>());
    EXPECT_EQ(row[col("censored requests, sqlite")].get<long long>(), ref["censored_requests"]["sqlite"].get<long long>());
    EXPECT_EQ(row[col("cases with truncated trace")].get<int>(), ref["truncated_traces"].get<int>());
    EXPECT_EQ(row[col("cases with censored p99 (lower bound)")].get<int>(), ref["censored_p99"].get<int>());
  }
  EXPECT_EQ(j["counts"]["static-zram"]["truncated_traces"], 3);
  EXPECT_EQ(j["counts"]["delayed-activation"]["truncated_traces"], 3);
  EXPECT_EQ(j["counts"]["bounded-reclaim"]["censored_requests"]["compute"], 4 * 7);  // seqs 127, 167, ..., 367

  // Table 5's deadline misses and requests, summed over the measured cases: every censored
  // request is a miss, a lost case is in neither (docs/PROTOCOL.md).
  const auto report = analysis::build_analysis_report(data, ts, pr);
  const analysis::Table* t5 = nullptr;
  for (const auto& t : report.tables)
    if (t.id == "table5_wake_service") t5 = &t;
  ASSERT_NE(t5, nullptr);
  auto col5 = [&](const std::string& name) { return analysis::column_index(*t5, name); };
  ASSERT_EQ(t5->rows.size(), 6u);
  long long misses = 0;
  for (const auto& row : t5->rows) {
    const std::string conf = row[col5("configuration")].get<std::string>(), can = row[col5("canary")].get<std::string>();
    SCOPED_TRACE(conf + " " + can);
    EXPECT_EQ(row[col5("deadline_misses_sum")].get<long long>(), j["counts"][conf]["deadline_misses"][can].get<long long>());
    EXPECT_EQ(row[col5("requests_sum")].get<long long>(), j["counts"][conf]["requests"][can].get<long long>());
    misses += row[col5("deadline_misses_sum")].get<long long>();
  }
  // The censored requests written above are misses: 28 + 3 x 100 + 2 x 25, and the ~300 of the
  // empty SQLite trace (its schedule is inferred from the warmup start).
  EXPECT_GE(misses, 28 + 300 + 50 + 290);

  // Table 4: the same estimates. Censored and imputed p99 values make the replicate distribution
  // discrete and heavy-tailed, so a bound is checked against the reference's distribution-free
  // Monte Carlo band (the quantiles at the level -/+ 5 binomial standard errors).
  for (int k = 0; k < 4; ++k) {
    const auto& c = pr.comparisons[k];
    SCOPED_TRACE(c.label);
    EXPECT_NEAR(c.estimate / j["estimate"][k].get<double>(), 1.0, 1e-12);
    EXPECT_GE(c.lower, j["lower_band"][k][0].get<double>() * (1 - 1e-12)) << "reference " << j["lower"][k];
    EXPECT_LE(c.lower, j["lower_band"][k][1].get<double>() * (1 + 1e-12)) << "reference " << j["lower"][k];
    EXPECT_GE(c.upper, j["upper_band"][k][0].get<double>() * (1 - 1e-12)) << "reference " << j["upper"][k];
    EXPECT_LE(c.upper, j["upper_band"][k][1].get<double>() * (1 + 1e-12)) << "reference " << j["upper"][k];
    std::printf("%-28s est %.15f | lower C++ %.5f in [%.5f, %.5f] | upper C++ %.5f in [%.5f, %.5f]\n", c.label.c_str(),
                c.estimate, c.lower, j["lower_band"][k][0].get<double>(), j["lower_band"][k][1].get<double>(), c.upper,
                j["upper_band"][k][0].get<double>(), j["upper_band"][k][1].get<double>());
  }
  std::filesystem::remove_all(dir);
}

// A k-arm campaign: five arms (the study's three, a "senpai" arm behaving like static
// zram with its own effect, a "reclaim-32" arm writing like bounded reclaim) in the `arms` table,
// and a declared family of five comparisons in the plan JSON (both spellings). The reference reads
// the arms and the comparisons from the DB as the product does; both agree on the arms, the
// labels, the level 1 - 0.05/5 and the five point estimates to 1e-12, and on the bounds within
// the reference's Monte Carlo band.

TEST(ReferenceAgreement, FiveArmsAndADeclaredFamilyAgree) {
  const auto dir = std::filesystem::temp_directory_path() / ("hk_analysis_karm_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "five.db").string();
  analysis::SyntheticOptions o{.seed = 4242, .vms = 3, .triplets_per_stratum = 3, .case_sd = 0.08, .pressure_s = 30};
  o.extra_arms = {{"senpai", "senpai", R"({"interval_s":6})", {std::log(0.9), std::log(1.1)}, 0},
                  {"reclaim-32", "bounded-reclaim", R"({"dose_mib":32})", {std::log(0.97), std::log(0.95)}, 2}};
  o.comparisons = {"compute:senpai/static-zram", "sqlite:senpai/static-zram", "compute:reclaim-32/bounded-reclaim",
                   "sqlite:static-zram", "compute:delayed-activation/senpai"};
  o.write_arms = true;
  analysis::write_synthetic_campaign(db, o);

  const int B = 20000;
  const std::uint64_t seed = 9;
  const auto data = analysis::load_campaign(db);
  ASSERT_TRUE(data.arms_recorded);
  const auto ts = analysis::build_triplets(data);
  ASSERT_EQ(ts.arms, (std::vector<std::string>{"static-zram", "delayed-activation", "bounded-reclaim", "senpai",
                                               "reclaim-32"}));
  ASSERT_EQ(ts.triplets.size(), 36u);
  ASSERT_EQ(ts.comparisons.size(), 5u);
  analysis::PrimaryOptions opt;
  opt.bootstrap = {B, seed, 2};
  const auto pr = analysis::run_primary(ts, opt);
  EXPECT_EQ(pr.m, 5);
  EXPECT_FALSE(pr.study_family);
  EXPECT_DOUBLE_EQ(pr.level, 1 - 0.05 / 5);

  const auto j = nlohmann::json::parse(run("/usr/bin/python3 " HARNESS_SOURCE_DIR "/analysis/reference/bootstrap_ref.py " +
                                           db + " --replicates " + std::to_string(B) + " --seed " + std::to_string(seed)));
  ASSERT_EQ(j["triplets"].get<int>(), 36);
  EXPECT_EQ(j["arms"].get<std::vector<std::string>>(), ts.arms);
  EXPECT_NEAR(j["level"].get<double>(), pr.level, 1e-15);
  ASSERT_EQ(j["estimate"].size(), 5u);
  for (int k = 0; k < 5; ++k) {
    const auto& c = pr.comparisons[k];
    SCOPED_TRACE(c.label);
    EXPECT_EQ(j["labels"][k].get<std::string>(), c.label);
    EXPECT_NEAR(c.estimate / j["estimate"][k].get<double>(), 1.0, 1e-12);
    EXPECT_GE(c.lower, j["lower_band"][k][0].get<double>() * (1 - 1e-12)) << "reference " << j["lower"][k];
    EXPECT_LE(c.lower, j["lower_band"][k][1].get<double>() * (1 + 1e-12)) << "reference " << j["lower"][k];
    EXPECT_GE(c.upper, j["upper_band"][k][0].get<double>() * (1 - 1e-12)) << "reference " << j["upper"][k];
    EXPECT_LE(c.upper, j["upper_band"][k][1].get<double>() * (1 + 1e-12)) << "reference " << j["upper"][k];
    std::printf("%-36s est C++ %.15f NumPy %.15f | lower %.5f | upper %.5f\n", c.label.c_str(), c.estimate,
                j["estimate"][k].get<double>(), c.lower, c.upper);
  }
  EXPECT_EQ(pr.comparisons[0].label, "compute: senpai / static-zram");
  EXPECT_EQ(pr.comparisons[3].label, "sqlite: bounded-reclaim / static-zram");  // the legacy spelling: bounded reclaim

  // The family names four treatments: one verdict per treatment, at the family's level (issue 57
  // item 1); the report lists every arm with its hash.
  const auto rep = analysis::build_analysis_report(data, ts, pr);
  EXPECT_TRUE(pr.per_treatment);
  EXPECT_EQ(pr.by_treatment.size(), 4u);
  EXPECT_NE(pr.verdict.text.find("ONE VERDICT PER TREATMENT"), std::string::npos) << pr.verdict.text;
  EXPECT_NE(pr.verdict.text.find("(1 - 0.05/5)"), std::string::npos) << pr.verdict.text;
  const auto& t1 = rep.tables.front();
  int arm_rows = 0;
  for (const auto& row : t1.rows)
    if (row[0].get<std::string>().rfind("arm ", 0) == 0) ++arm_rows;
  EXPECT_EQ(arm_rows, 5);
  for (const auto& t : rep.tables) {
    if (t.id == "table5_wake_service") {
      EXPECT_EQ(t.rows.size(), 10u);  // 5 arms x 2 canaries
    } else if (t.id == "mechanism" || t.id == "outcome_counts" || t.id == "reclaim_execution") {
      EXPECT_EQ(t.rows.size(), 5u) << t.id;
    }
  }
  std::filesystem::remove_all(dir);
}
