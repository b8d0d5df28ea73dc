// What an arm buys and what it costs (analysis/tables/arm_effects.hpp) and whether a treatment acted
// (analysis/tables/treatment_actions.hpp), issue 57 items 2 and 6:
//   - bg memory per phase (time average by trapezoids over the sample times, minimum, net DRAM
//     freed = fall of memory.current less growth of the zram pool) and the DRAM held by bg, by hand;
//   - the CPU of the memory.reclaim writes in the pressure phase and the reclaim CPU total, by hand;
//   - the secondary intervals: the estimate is the stratified mean of the block differences computed
//     here from the cases, and the interval is the one a joint bootstrap with Table 4's log ratios
//     gives (the same resampling indices); an endpoint no block measured says so; no secondary
//     endpoint changes Table 4 or the verdict;
//   - what each arm's policy did, and a treatment that did not act in a case is named at the top and
//     on its verdict line while its comparisons keep every case (intention to treat).
#include "analysis/report/analysis_report.hpp"
#include "analysis/tables/arm_effects.hpp"
#include "analysis/stats/bootstrap.hpp"
#include "analysis/simulate/synthetic.hpp"
#include "analysis/tables/treatment_actions.hpp"
#include "results/db.hpp"

#include "golden_db.hpp"
#include "report_checks.hpp"
#include "tests/common/small_synthetic.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace {

constexpr std::int64_t kEffectS = 1'000'000'000;
constexpr std::int64_t kEffectMiB = 1 << 20;

analysis::MemorySample mem_at(std::int64_t t_s, int phase, double bg_mib, std::optional<double> zram_mib,
                          std::optional<std::int64_t> swap_kib = std::nullopt) {
  analysis::MemorySample s;
  s.t_ns = t_s * kEffectS;
  s.phase = phase;
  s.bg_current_bytes = static_cast<std::int64_t>(bg_mib * kEffectMiB);
  if (zram_mib) s.zram_mem_used_bytes = static_cast<std::int64_t>(*zram_mib * kEffectMiB);
  s.swapfile_used_kib = swap_kib;
  return s;
}

// The stratified mean (mean over strata of the stratum means) of v by the blocks' strata.
double by_stratum_mean(const std::vector<double>& v, const std::vector<int>& strata) {
  std::map<int, std::pair<double, int>> by;
  for (std::size_t i = 0; i < v.size(); ++i) {
    by[strata[i]].first += v[i];
    ++by[strata[i]].second;
  }
  double sum = 0;
  for (const auto& [s, x] : by) sum += x.first / x.second;
  return sum / static_cast<double>(by.size());
}

const analysis::EndpointInterval& endpoint_named(const analysis::PairEffects& p, const std::string& prefix) {
  for (const auto& e : p.endpoints)
    if (e.endpoint.rfind(prefix, 0) == 0) return e;
  throw std::runtime_error("no endpoint " + prefix);
}

}  // namespace

TEST(ArmEffects, BgMemoryPerPhaseByHand) {
  // warmup 0-2 s at 100 MiB; pressure 3, 4, 6 s (the tick at 5 s missed): 100, 400, 400 MiB of bg,
  // zram pool 0, 10, 30 MiB, swapfile 0, 1024, 2048 KiB; recovery one sample.
  const std::vector<analysis::MemorySample> s = {
      mem_at(0, 0, 100, 0), mem_at(1, 0, 100, 0), mem_at(2, 0, 100, 0), mem_at(3, 1, 100, 0, 0), mem_at(4, 1, 400, 10, 1024),
      mem_at(6, 1, 400, 30, 2048), mem_at(7, 2, 50, 30)};
  const auto m = analysis::phase_memory(s);
  // Trapezoids over t: (100+400)/2 x 1 s + 400 x 2 s = 1050 MiB s over 3 s (a plain mean says 300).
  EXPECT_NEAR(*m[1].bg_current_avg_mib, 350.0, 1e-9);
  EXPECT_NEAR(*m[1].bg_current_min_mib, 100.0, 1e-9);
  // Net freed: fall of bg (100 - 400) less the pool's growth (30 - 0).
  EXPECT_NEAR(*m[1].net_freed_mib, -330.0, 1e-9);
  EXPECT_NEAR(*m[1].zram_pool_avg_mib, (5.0 * 1 + 20.0 * 2) / 3, 1e-9);
  EXPECT_NEAR(*m[1].swapfile_used_max_mib, 2.0, 1e-12);
  EXPECT_NEAR(*m[0].bg_current_avg_mib, 100.0, 1e-9);
  EXPECT_NEAR(*m[0].net_freed_mib, 0.0, 1e-9);
  EXPECT_FALSE(m[0].swapfile_used_max_mib) << "no sample carries it: not measured, never 0";
  EXPECT_NEAR(*m[2].bg_current_avg_mib, 50.0, 1e-9);  // one sample: its value
  // DRAM held in pressure: bg + pool, 100, 410, 430 -> (255 + 420 x 2) / 3.
  EXPECT_NEAR(*analysis::dram_held_average(s, 1), (255.0 + 840.0) / 3, 1e-9);
  EXPECT_FALSE(analysis::dram_held_average(s, 2 + 1)) << "no such phase";
}

TEST(ArmEffects, ReclaimCpuOfTheWritesInThePressurePhase) {
  analysis::CaseSummary c;
  c.pressure_start_ns = 10 * kEffectS;
  c.pressure_end_ns = 20 * kEffectS;
  EXPECT_EQ(analysis::writes_cpu_ms(c), 0.0) << "no write: a measured zero";
  analysis::ReclaimRecord w;
  w.start_ns = 12 * kEffectS;
  w.write_cpu_us = 1500;
  c.outcome.reclaim.push_back(w);
  w.start_ns = 25 * kEffectS;  // in recovery: not the pressure phase's
  w.write_cpu_us = 9000;
  c.outcome.reclaim.push_back(w);
  EXPECT_NEAR(*analysis::writes_cpu_ms(c), 1.5, 1e-12);
  EXPECT_FALSE(analysis::reclaim_cpu_ms(c)) << "kswapd and bg system not measured";
  c.mech.kswapd_cpu_ms = 20;
  c.mech.bg_cpu_system_ms = 300;
  EXPECT_NEAR(*analysis::reclaim_cpu_ms(c), 321.5, 1e-12);
  c.outcome.reclaim[0].write_cpu_us.reset();
  EXPECT_FALSE(analysis::writes_cpu_ms(c)) << "a write in pressure without its CPU: not measured";
}

TEST(ArmEffects, SecondaryIntervalsArePairedAndShareTable4sResampling) {
  const auto path = golden::temp_db("arm_effects");
  analysis::write_synthetic_campaign(path, test_support::small_synthetic("kvm"));
  const auto data = analysis::load_campaign(path);
  const auto ts = analysis::build_triplets(data);
  const auto opt = report_checks::small_bootstrap();
  const auto pr = analysis::run_primary(ts, opt);
  const auto pairs = analysis::secondary_intervals(ts, pr);
  ASSERT_EQ(pairs.size(), 2u);  // the study's four: reclaim vs static, reclaim vs delayed
  EXPECT_EQ(pairs[0].treatment, "bounded-reclaim");
  EXPECT_EQ(pairs[0].comparator, "static-zram");
  EXPECT_EQ(pairs[0].comparisons,
            (std::vector<std::string>{"compute: bounded-reclaim / static-zram", "sqlite: bounded-reclaim / static-zram"}));
  ASSERT_EQ(pairs[0].endpoints.size(), analysis::secondary_endpoints().size());

  // Net DRAM freed against static zram, per block (static - reclaim), recomputed from the cases.
  const int t = ts.arm_index("bounded-reclaim"), c = ts.arm_index("static-zram"), k = 0;
  std::vector<double> freed, logr;
  for (const auto& b : ts.triplets) {
    freed.push_back(*b.cases[c]->mech.dram_held_avg_mib - *b.cases[t]->mech.dram_held_avg_mib);
    logr.push_back(std::log(b.cases[t]->latency[k]->p99_us / b.cases[c]->latency[k]->p99_us));
  }
  const auto strata = analysis::stratum_labels(ts);
  const auto& f = endpoint_named(pairs[0], "net DRAM freed");
  EXPECT_EQ(f.unit, "MiB");
  EXPECT_EQ(f.blocks, static_cast<int>(ts.triplets.size()));
  EXPECT_NEAR(f.estimate, by_stratum_mean(freed, strata), 1e-9);
  EXPECT_GT(f.estimate, 0.0) << "the synthetic reclaiming arm holds 48-80 MiB less after its trigger";
  // The same resampling as Table 4: a joint bootstrap of the log ratio and the freed MiB gives
  // Table 4's interval in its first column and this interval in its second.
  Eigen::MatrixXd joint(static_cast<Eigen::Index>(freed.size()), 2);
  for (std::size_t i = 0; i < freed.size(); ++i) joint.row(static_cast<Eigen::Index>(i)) << logr[i], freed[i];
  const auto b = analysis::stratified_bootstrap(joint, strata, {pr.replicates, pr.seed, 1});
  const auto l = analysis::percentile_interval(b.plain.col(0), pr.level);
  const auto m = analysis::percentile_interval(b.plain.col(1), pr.level);
  EXPECT_DOUBLE_EQ(std::exp(l.lower), pr.comparisons[0].lower);
  EXPECT_DOUBLE_EQ(std::exp(l.upper), pr.comparisons[0].upper);
  EXPECT_DOUBLE_EQ(m.lower, f.lower);
  EXPECT_DOUBLE_EQ(m.upper, f.upper);
  // bg system CPU grows at the same synthetic rate in every arm: difference 0, interval [0, 0].
  const auto& sys = endpoint_named(pairs[0], "bg system CPU");
  EXPECT_EQ(sys.blocks, static_cast<int>(ts.triplets.size()));
  EXPECT_NEAR(sys.estimate, 0.0, 1e-9);
  EXPECT_NEAR(sys.lower, 0.0, 1e-9);
  EXPECT_NEAR(sys.upper, 0.0, 1e-9);
  // The synthetic write records no CPU time: no block measured the writes' CPU (nor the total).
  EXPECT_EQ(endpoint_named(pairs[0], "memory.reclaim writes CPU").blocks, 0);
  EXPECT_EQ(endpoint_named(pairs[0], "reclaim CPU").blocks, 0);

  // In the report: labelled secondary, "not measured" where no block measured it; Table 4 and the
  // verdict are those of the primary result alone.
  const auto r = analysis::build_analysis_report(data, ts, pr);
  report_checks::expect_no_nan(r);
  const auto& sec = report_checks::table(r, "secondary_endpoints");
  ASSERT_EQ(sec.rows.size(), 2 * analysis::secondary_endpoints().size());
  for (const auto& row : sec.rows) EXPECT_EQ(row.back(), "secondary");
  const auto est = analysis::column_index(sec, "estimate");
  EXPECT_EQ(sec.rows[9][3], analysis::secondary_endpoints()[9].name);
  EXPECT_EQ(sec.rows[9][est], "not measured");
  const auto& t4 = report_checks::table(r, "table4_primary");
  ASSERT_EQ(t4.rows.size(), 4u);
  for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(t4.rows[j][2], analysis::num(pr.comparisons[j].estimate));
  // One trade-off point per declared comparison; a pair's two canaries share its freed memory.
  const auto& to = r.extra.at("tradeoff");
  ASSERT_EQ(to.size(), 4u);
  EXPECT_EQ(to[0].at("label"), "compute: bounded-reclaim / static-zram");
  EXPECT_DOUBLE_EQ(to[0].at("freed_mib").get<double>(), f.estimate);
  EXPECT_DOUBLE_EQ(to[2].at("freed_mib").get<double>(), f.estimate);  // sqlite: bounded-reclaim / static-zram
  EXPECT_DOUBLE_EQ(to[0].at("ratio_upper").get<double>(), pr.comparisons[0].upper);
  // One row per case of the blocks in arm_effects_cases; one per arm in arm_effects.
  EXPECT_EQ(report_checks::table(r, "arm_effects_cases").rows.size(), 3 * ts.triplets.size());
  EXPECT_EQ(report_checks::table(r, "arm_effects").rows.size(), 3u);
}

TEST(TreatmentActions, EveryStudyArmDidWhatItSays) {
  const auto path = golden::temp_db("actions_study");
  analysis::write_synthetic_campaign(path, test_support::small_synthetic("kvm"));
  const auto r = analysis::analyze_campaign(path, report_checks::small_bootstrap());
  const auto& a = r.extra.at("treatment_actions");
  ASSERT_EQ(a.size(), 3u);
  // static-zram: no action (its trigger a would_trigger); delayed: zram on; reclaim: one write each.
  EXPECT_EQ(a[0].at("arm"), "static-zram");
  EXPECT_FALSE(a[0].at("treatment").get<bool>());
  EXPECT_EQ(a[0].at("acted"), 0);
  EXPECT_EQ(a[0].at("would_trigger"), 16);
  EXPECT_EQ(a[1].at("zram_on"), 16);
  EXPECT_EQ(a[1].at("acted"), 16);
  EXPECT_EQ(a[2].at("arm"), "bounded-reclaim");
  EXPECT_TRUE(a[2].at("treatment").get<bool>());
  EXPECT_EQ(a[2].at("trigger_fired"), 16);
  EXPECT_EQ(a[2].at("writes"), 16);
  EXPECT_EQ(a[2].at("bytes_asked"), 16 * 96 * kEffectMiB);
  EXPECT_EQ(a[2].at("acted"), 16);
  for (const auto& w : r.warnings) EXPECT_EQ(w.find("DID NOT ACT"), std::string::npos) << w;
  EXPECT_EQ(r.summary.at(0).find("took no action"), std::string::npos) << r.summary.at(0);
}

TEST(TreatmentActions, ATreatmentThatNeverActedInACaseIsSaidSoAndKeepsTheCase) {
  const auto path = golden::temp_db("actions_never");
  analysis::write_synthetic_campaign(path, test_support::small_synthetic("kvm"));
  const auto before = analysis::analyze_campaign(path, report_checks::small_bootstrap());
  // One bounded-reclaim case whose trigger never fired: no trigger event, no write.
  std::string id;
  {
    results::Db db(path, results::Db::Mode::ReadWrite);
    results::Stmt q(db, "SELECT case_id FROM cases WHERE configuration = 'bounded-reclaim' ORDER BY case_id LIMIT 1");
    ASSERT_TRUE(q.step());
    id = q.text(0);
    db.exec("DELETE FROM reclaim_actions WHERE case_id = '" + id + "'");
    db.exec("DELETE FROM controller_events WHERE case_id = '" + id + "' AND kind = 'trigger'");
  }
  const auto r = analysis::analyze_campaign(path, report_checks::small_bootstrap());
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.warnings[0].rfind("TREATMENT DID NOT ACT: bounded-reclaim took no action", 0), 0u) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("in 1 of its 16 case(s): " + id + " (trigger: never)"), std::string::npos)
      << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("intention to treat"), std::string::npos);
  EXPECT_NE(r.summary.at(0).find("(bounded-reclaim took no action in 1 of 16 case(s): read by intention to treat"),
            std::string::npos)
      << r.summary.at(0);
  const auto& a = r.extra.at("treatment_actions")[2];
  EXPECT_EQ(a.at("acted"), 15);
  EXPECT_EQ(a.at("trigger_fired"), 15);
  EXPECT_EQ(a.at("not_acted"), nlohmann::json::array({id + " (trigger: never)"}));
  // Intention to treat: the case keeps its outcome, so Table 4 is as before.
  EXPECT_EQ(report_checks::table(r, "table4_primary").rows, report_checks::table(before, "table4_primary").rows);
}
