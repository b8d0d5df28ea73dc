// Pilot dose selection: the largest eligible dose is chosen; every failed criterion is named.
#include "analysis/tables/backend_validity.hpp"
#include "analysis/tables/pilot.hpp"
#include "analysis/report/report_table.hpp"
#include "analysis/simulate/synthetic.hpp"

#include "results/db.hpp"

#include "golden_db.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

namespace {
constexpr std::int64_t MiB = 1048576;
bool any_contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& w : v)
    if (w.find(s) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST(Pilot, AllPassChoosesLargest) {
  const auto path = golden::temp_db("pilot_ok");
  analysis::write_synthetic_pilot(path, {{16 * MiB, 0.3, 1.1}, {32 * MiB, 0.4, 1.0}, {64 * MiB, 0.6, 0.95}, {96 * MiB, 0.9, 0.85}}, 1, 5);
  const auto r = analysis::select_dose(path);
  ASSERT_EQ(r.doses.size(), 4u);
  for (const auto& d : r.doses) {
    EXPECT_TRUE(d.eligible) << d.dose_bytes;
    EXPECT_EQ(d.cases, 4);
  }
  ASSERT_TRUE(r.chosen_bytes);
  EXPECT_EQ(*r.chosen_bytes, 96 * MiB);
  EXPECT_NEAR(*r.doses[3].worst_duration_s, 0.9, 1e-9);
  EXPECT_NEAR(*r.doses[3].min_achieved_ratio, 0.85, 1e-6);
  const auto rep = analysis::pilot_report(path, r);
  EXPECT_NE(analysis::render_markdown(rep).find("**Chosen dose: 96 MiB**"), std::string::npos);
}

TEST(Pilot, FailedCriteriaNamedAndLargestEligibleChosen) {
  const auto path = golden::temp_db("pilot_fail");
  std::vector<analysis::SyntheticDose> doses{
      {16 * MiB, 0.3, 1.1},
      {32 * MiB, 0.5, 0.9},
      {64 * MiB, 1.3, 0.9},                       // too slow
      {96 * MiB, 0.9, 0.7, EINVAL, true, false},  // partial, interface error, OOM, dirty restoration
  };
  analysis::write_synthetic_pilot(path, doses, 1, 5);
  const auto r = analysis::select_dose(path);
  ASSERT_TRUE(r.chosen_bytes);
  EXPECT_EQ(*r.chosen_bytes, 32 * MiB);
  EXPECT_FALSE(r.doses[2].eligible);
  EXPECT_TRUE(any_contains(r.doses[2].failed, "reclaim took 1.300 s > 1.0 s"));
  const auto& f = r.doses[3].failed;
  EXPECT_TRUE(any_contains(f, "achieved (pgsteal x page size across the write) 0.70 of the request < 0.80"));
  EXPECT_TRUE(any_contains(f, "interface error: memory.reclaim write errno 22"));
  EXPECT_TRUE(any_contains(f, "OOM: 1 oom_kill event(s)"));
  EXPECT_TRUE(any_contains(f, "restoration not clean"));
  EXPECT_TRUE(any_contains(f, "pilot-vm0-slow-structured-dose96"));  // names the case
}

TEST(Pilot, NoEligibleDoseAndNotAPilotDb) {
  const auto path = golden::temp_db("pilot_none");
  analysis::write_synthetic_pilot(path, {{16 * MiB, 2.0, 0.5}}, 1, 5);
  const auto r = analysis::select_dose(path);
  EXPECT_FALSE(r.chosen_bytes);
  EXPECT_NE(analysis::render_markdown(analysis::pilot_report(path, r)).find("No eligible dose"), std::string::npos);
  const auto empty = golden::written_db("pilot_empty", {{"vm0", "r", 1, "static-zram", 1000, 1000}});
  EXPECT_THROW(analysis::select_dose(empty), std::invalid_argument);
}

TEST(Pilot, DoseWithThreeOfFourRegimesIsIncompleteNotEligible) {
  const auto path = golden::temp_db("pilot_incomplete");
  analysis::SyntheticDose d32{32 * MiB, 0.4, 1.0};
  d32.regimes = 3;  // fast-random scheduled, never run
  analysis::write_synthetic_pilot(path, {{16 * MiB, 0.3, 1.1}, d32}, 1, 5);
  const auto r = analysis::select_dose(path);
  ASSERT_EQ(r.doses.size(), 2u);
  EXPECT_TRUE(r.doses[0].eligible);
  EXPECT_EQ(r.doses[0].regimes_complete, 4);
  EXPECT_FALSE(r.doses[1].eligible);
  EXPECT_TRUE(r.doses[1].incomplete);
  EXPECT_EQ(r.doses[1].regimes_complete, 3);
  EXPECT_EQ(r.doses[1].regimes_expected, 4);
  ASSERT_FALSE(r.doses[1].failed.empty());
  EXPECT_EQ(r.doses[1].failed[0],
            "incomplete, not eligible: 3 of 4 regimes have exactly one completed case (fast-random has 0 completed case(s))");
  ASSERT_TRUE(r.chosen_bytes);
  EXPECT_EQ(*r.chosen_bytes, 16 * MiB);  // the larger dose is not chosen
  const auto md = analysis::render_markdown(analysis::pilot_report(path, r));
  EXPECT_NE(md.find("no (incomplete)"), std::string::npos);
}

// Study: achieved "computed as pgsteal times the page size": the figure across the write decides;
// the conservative figure (concurrent limit reclaim taken off) is reported beside it, never judged.
TEST(Pilot, AchievedAcrossTheWriteDecidesBothWaysAndConservativeIsOnlyReported) {
  const auto path = golden::temp_db("pilot_achieved");
  analysis::SyntheticDose d32{32 * MiB, 0.4, 0.79};  // across the write below 80%: fails ...
  d32.min_conservative_ratio = 0.95;                  // ... however good the conservative figure
  analysis::SyntheticDose d64{64 * MiB, 0.4, 0.81};  // just above 80%: passes
  d64.min_conservative_ratio = 0.10;
  analysis::SyntheticDose d96{96 * MiB, 0.5, 0.90};  // 0.90 >= 0.80 passes, although 0.20 was limit reclaim
  d96.min_conservative_ratio = 0.70;
  analysis::write_synthetic_pilot(path, {d32, d64, d96}, 1, 5);
  const auto r = analysis::select_dose(path);
  ASSERT_EQ(r.doses.size(), 3u);
  EXPECT_FALSE(r.doses[0].eligible);
  ASSERT_EQ(r.doses[0].failed.size(), 1u);
  EXPECT_EQ(r.doses[0].failed[0],
            "pilot-vm0-slow-structured-dose32: achieved (pgsteal x page size across the write) 0.79 of the request < 0.80");
  EXPECT_TRUE(r.doses[1].eligible) << r.doses[1].failed.size();
  EXPECT_TRUE(r.doses[2].eligible);
  EXPECT_NEAR(*r.doses[2].min_achieved_ratio, 0.90, 1e-6);
  EXPECT_NEAR(*r.doses[2].min_conservative_ratio, 0.70, 1e-6);
  ASSERT_TRUE(r.chosen_bytes);
  EXPECT_EQ(*r.chosen_bytes, 96 * MiB);
  const auto rep = analysis::pilot_report(path, r);
  const auto& t = rep.tables.at(0);
  EXPECT_NEAR(t.rows[2][5].get<double>(), 0.90, 1e-6);  // both figures shown
  EXPECT_NEAR(t.rows[2][6].get<double>(), 0.70, 1e-6);
  EXPECT_EQ(analysis::column_name(t.columns[5]), "min_achieved_ratio");
  EXPECT_EQ(analysis::column_name(t.columns[6]), "min_conservative_ratio");
  // A write without the across-the-write figure cannot pass.
  {
    results::Db db(path, results::Db::Mode::ReadWrite);
    db.exec("UPDATE reclaim_actions SET achieved_bytes = NULL WHERE case_id = 'pilot-vm0-fast-random-dose96'");
  }
  const auto r2 = analysis::select_dose(path);
  EXPECT_FALSE(r2.doses[2].eligible);
  EXPECT_TRUE(any_contains(r2.doses[2].failed, "fast-random-dose96: achieved not measured"));
}

// Study: "no OOM or interface error": every non-zero errno of the write is an interface error,
// EAGAIN (partial reclaim) included; errno 0 is not.
TEST(Pilot, AnyNonZeroErrnoIsAnInterfaceErrorEagainIncluded) {
  const auto path = golden::temp_db("pilot_eagain");
  analysis::SyntheticDose ok{32 * MiB, 0.4, 0.95};
  analysis::SyntheticDose eagain{64 * MiB, 0.4, 0.95, EAGAIN};  // achieved 95%, yet EAGAIN
  analysis::SyntheticDose einval{96 * MiB, 0.4, 0.95, EINVAL};
  analysis::write_synthetic_pilot(path, {ok, eagain, einval}, 1, 5);
  const auto r = analysis::select_dose(path);
  ASSERT_EQ(r.doses.size(), 3u);
  EXPECT_TRUE(r.doses[0].eligible);
  EXPECT_EQ(r.doses[0].eagain, 0);
  EXPECT_FALSE(r.doses[1].eligible);
  EXPECT_EQ(r.doses[1].eagain, 1);
  ASSERT_EQ(r.doses[1].failed.size(), 1u);
  EXPECT_EQ(r.doses[1].failed[0], std::string("pilot-vm0-slow-structured-dose64: interface error: memory.reclaim write "
                                              "errno 11 (") + std::strerror(EAGAIN) + ")");
  EXPECT_FALSE(r.doses[2].eligible);
  EXPECT_TRUE(any_contains(r.doses[2].failed, "interface error: memory.reclaim write errno 22"));
  ASSERT_TRUE(r.chosen_bytes);
  EXPECT_EQ(*r.chosen_bytes, 32 * MiB);
  // A controller error event is an interface error too; without it the dose passes (above).
  {
    results::Db db(path, results::Db::Mode::ReadWrite);
    db.exec("INSERT INTO controller_events(case_id, t_ns, kind) VALUES ('pilot-vm0-fast-random-dose32', 16000000000, 'error')");
  }
  const auto r2 = analysis::select_dose(path);
  EXPECT_FALSE(r2.doses[0].eligible);
  EXPECT_TRUE(any_contains(r2.doses[0].failed, "fast-random-dose32: interface error: 1 controller error event(s)"));
}

// "Valid backend telemetry": zram samples throughout the pressure phase, device active from the
// start (bounded reclaim). Each criterion driven both ways on one dose at a time.
TEST(Pilot, BackendTelemetryMustCoverThePressurePhaseWithZramActiveFromTheStart) {
  const std::string id = "pilot-vm0-slow-random-dose16";
  auto fresh = [&](const std::string& stem) {
    const auto path = golden::temp_db(stem);
    analysis::write_synthetic_pilot(path, {{16 * MiB, 0.3, 1.1}}, 1, 10);  // pressure [15 s, 25 s]
    return path;
  };
  auto verdict = [&](const std::string& path, const std::string& sql) {
    if (!sql.empty()) {
      results::Db db(path, results::Db::Mode::ReadWrite);
      db.exec(sql);
    }
    return analysis::select_dose(path).doses.at(0);
  };
  EXPECT_TRUE(verdict(fresh("pilot_backend_ok"), "").eligible);
  // One sample gone: a 2 s stretch (2 telemetry periods) is still "throughout".
  EXPECT_TRUE(verdict(fresh("pilot_backend_gap2"),
                      "DELETE FROM telemetry WHERE case_id = '" + id + "' AND t_ns = 20000000000").eligible);
  // Two samples gone: 3 s without a zram sample is not.
  const auto gap3 = verdict(fresh("pilot_backend_gap3"), "DELETE FROM telemetry WHERE case_id = '" + id +
                                                             "' AND t_ns IN (20000000000, 21000000000)");
  EXPECT_FALSE(gap3.eligible);
  ASSERT_EQ(gap3.failed.size(), 1u);
  EXPECT_EQ(gap3.failed[0], id + ": invalid backend telemetry: no zram sample for 3.0 s from 4.0 s after pressure "
                                 "start (more than 2 telemetry periods of 1000 ms)");
  // Samples present but without the zram columns (mm_stat unreadable).
  const auto cols = verdict(fresh("pilot_backend_nocols"),
                            "UPDATE telemetry SET zram_orig_data_bytes = NULL WHERE case_id = '" + id +
                                "' AND t_ns >= 24000000000");
  EXPECT_FALSE(cols.eligible);
  EXPECT_TRUE(any_contains(cols.failed, id + ": invalid backend telemetry: 2 of 11 pressure-phase sample(s) lack the "
                                             "zram mm_stat columns (first 9.0 s after pressure start)"));
  // The zram device not swapped on in setup (bounded reclaim: active from the start).
  const auto inactive = verdict(fresh("pilot_backend_inactive"),
                                "UPDATE cases SET outcome_json = json_set(outcome_json, '$.setup_steps', json('[]')) "
                                "WHERE case_id = '" + id + "'");
  EXPECT_FALSE(inactive.eligible);
  ASSERT_EQ(inactive.failed.size(), 1u);
  EXPECT_EQ(inactive.failed[0], id + ": invalid backend telemetry: zram not active from the start (no setup step "
                                     "'swapon /dev/zram1 ...' in outcome_json.setup_steps)");
  const auto failed_swapon = verdict(fresh("pilot_backend_swapon_errno"),
                                     "UPDATE cases SET outcome_json = json_set(outcome_json, '$.setup_steps[0].errno', 16) "
                                     "WHERE case_id = '" + id + "'");
  EXPECT_FALSE(failed_swapon.eligible);
  EXPECT_TRUE(any_contains(failed_swapon.failed, "setup step 'swapon /dev/zram1 prio 100' returned errno 16"));
  // Restoration verdict: clean passes (above), unclean fails.
  const auto unclean = verdict(fresh("pilot_backend_unclean"), "UPDATE restoration SET clean = 0 WHERE case_id = '" + id + "'");
  EXPECT_FALSE(unclean.eligible);
  EXPECT_TRUE(any_contains(unclean.failed, id + ": restoration not clean"));
}

// Delayed activation (the other branch of the backend rule): zram swapped on once after the
// trigger; static zram: from the start. Judged on the synthetic campaign's cases.
TEST(BackendValidity, DelayedActivationNeedsOneBackendOnAfterTheTrigger) {
  analysis::SyntheticOptions o;
  o.vms = 1;
  o.regimes = {"slow-structured"};
  o.triplets_per_stratum = 1;
  o.warmup_s = 3;
  o.pressure_s = 8;
  o.recovery_s = 2;
  const auto path = golden::temp_db("backend_delayed");
  analysis::write_synthetic_campaign(path, o);
  const std::string delayed = "synthetic-vm0-slow-structured-r1-delayed-activation";
  const std::string stat = "synthetic-vm0-slow-structured-r1-static-zram";
  auto problems = [&](const std::string& id, analysis::ZramDue cf, const std::string& sql = "") {
    results::Db db(path, results::Db::Mode::ReadWrite);
    if (!sql.empty()) db.exec(sql);
    results::Stmt q(db, "SELECT outcome_json, spec_json FROM cases WHERE case_id = ?1");
    q.bind(1, id);
    EXPECT_TRUE(q.step());
    return analysis::backend_telemetry_findings(db, id, cf, nlohmann::json::parse(q.text(0)),
                                                nlohmann::json::parse(q.text(1)));
  };
  EXPECT_TRUE(problems(delayed, analysis::ZramDue::AfterTrigger).empty());
  EXPECT_TRUE(problems(stat, analysis::ZramDue::InSetup).empty());
  // Static zram never gets a backend_on: judged as delayed it would fail, as static it passes.
  EXPECT_FALSE(problems(stat, analysis::ZramDue::AfterTrigger).empty());
  const auto before = problems(delayed, analysis::ZramDue::AfterTrigger,
                               "UPDATE controller_events SET t_ns = t_ns - 2000000000 WHERE case_id = '" + delayed +
                                   "' AND kind = 'backend_on'");
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0], "invalid backend telemetry: backend_on 1.999 s before the trigger");
  const auto errno_on = problems(delayed, analysis::ZramDue::AfterTrigger,
                                 "UPDATE controller_events SET t_ns = t_ns + 2000000000, detail_json = "
                                 "json_set(detail_json, '$.step.errno', 16) WHERE case_id = '" + delayed +
                                     "' AND kind = 'backend_on'");
  ASSERT_EQ(errno_on.size(), 1u);
  EXPECT_EQ(errno_on[0], "invalid backend telemetry: backend_on step returned errno 16");
  const auto never = problems(delayed, analysis::ZramDue::AfterTrigger,
                              "DELETE FROM controller_events WHERE case_id = '" + delayed + "' AND kind = 'backend_on'");
  ASSERT_EQ(never.size(), 1u);
  EXPECT_EQ(never[0], "invalid backend telemetry: no backend_on event after the trigger (zram never activated)");
}

TEST(Pilot, RefusesATripletDb) {
  const auto path = golden::written_db("pilot_refuse_triplets", {{"vm0", "r", 1, "static-zram", 1000, 1000},
                                                                  {"vm0", "r", 1, "delayed-activation", 1000, 1000},
                                                                  {"vm0", "r", 1, "bounded-reclaim", 1000, 1000}});
  try {
    analysis::select_dose(path);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("is not a pilot DB: 3 case(s) belong to matched triplets (e.g. vm0-r-1-bounded-reclaim)"),
              std::string::npos) << e.what();
  }
  // A pilot-shaped DB whose preregistered campaign says design.kind: matched-triplets is refused too.
  const auto p2 = golden::temp_db("pilot_refuse_kind");
  analysis::write_synthetic_pilot(p2, {{16 * MiB, 0.3, 1.1}}, 1, 5);
  {
    results::Db db(p2, results::Db::Mode::ReadWrite);
    db.exec("UPDATE campaign_meta SET value = 'name: c\ndesign:\n  kind: matched-triplets\n' WHERE key = 'campaign_yaml'");
  }
  try {
    analysis::select_dose(p2);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("is not a pilot DB: its campaign has design.kind = matched-triplets"),
              std::string::npos) << e.what();
  }
}

TEST(Pilot, OomKillRecordedInOutcomeJsonMakesTheDoseIneligible) {
  const auto path = golden::temp_db("pilot_oom_outcome");
  analysis::write_synthetic_pilot(path, {{16 * MiB, 0.3, 1.1}, {32 * MiB, 0.4, 1.0}}, 1, 5);
  {
    results::Db db(path, results::Db::Mode::ReadWrite);
    db.exec("UPDATE cases SET outcome_json = json_set(outcome_json, '$.oom_kills', json('{\"bg\":0,\"fg\":1}')) "
            "WHERE case_id = 'pilot-vm0-fast-random-dose32'");
  }
  const auto r = analysis::select_dose(path);
  ASSERT_EQ(r.doses.size(), 2u);
  EXPECT_FALSE(r.doses[1].eligible);
  ASSERT_EQ(r.doses[1].failed.size(), 1u);
  EXPECT_EQ(r.doses[1].failed[0], "pilot-vm0-fast-random-dose32: OOM: outcome_json.oom_kills bg 0 fg 1");
  ASSERT_TRUE(r.chosen_bytes);
  EXPECT_EQ(*r.chosen_bytes, 16 * MiB);
}

// Under TCG the duration criterion says nothing about a real VM: pilot-select says so beside
// Table 3 (summary and the table's notes) and in its JSON; under KVM it says nothing of the kind.
TEST(Pilot, TcgMakesTheDurationCriterionMeaninglessAndSaysSo) {
  const auto path = golden::temp_db("pilot_tcg");
  analysis::write_synthetic_pilot(path, {{16 * MiB, 0.3, 1.1}, {32 * MiB, 0.4, 1.0}}, 1, 5);
  {
    const auto kvm = analysis::select_dose(path);
    EXPECT_TRUE(kvm.duration_criterion_valid());
    const auto rep = analysis::pilot_report(path, kvm);
    EXPECT_EQ(analysis::render_markdown(rep).find("Duration criterion meaningless"), std::string::npos);
    EXPECT_TRUE(rep.extra.at("duration_criterion").at("valid").get<bool>());
    EXPECT_EQ(rep.extra.at("duration_criterion").at("accelerators").at("kvm").get<int>(), 8);
  }
  {
    results::Db db(path, results::Db::Mode::ReadWrite);
    db.exec("UPDATE cases SET accelerator = 'tcg' WHERE case_id IN (SELECT case_id FROM cases LIMIT 3)");
  }
  const auto r = analysis::select_dose(path);
  EXPECT_FALSE(r.duration_criterion_valid());
  ASSERT_TRUE(r.chosen_bytes);  // the rule still runs; its timing part is what is meaningless
  const auto rep = analysis::pilot_report(path, r);
  const std::string md = analysis::render_markdown(rep);
  EXPECT_NE(md.find("Duration criterion meaningless: accelerator TCG (3 of the evaluated case(s): 5 kvm, 3 tcg)"),
            std::string::npos) << md;
  EXPECT_NE(md.find("timing claims are invalid"), std::string::npos);
  EXPECT_NE(md.find("(TCG: duration criterion meaningless, see above)"), std::string::npos) << md;
  ASSERT_EQ(rep.tables.size(), 2u);  // Table 3 and the readings beside it
  EXPECT_TRUE(any_contains(rep.tables[0].notes, "Duration criterion meaningless"));
  const auto& dc = rep.extra.at("duration_criterion");
  EXPECT_FALSE(dc.at("valid").get<bool>());
  EXPECT_EQ(dc.at("accelerators").at("tcg").get<int>(), 3);
  EXPECT_DOUBLE_EQ(dc.at("max_duration_s").get<double>(), 1.0);
  EXPECT_NE(dc.at("statement").get<std::string>().find("accelerator TCG"), std::string::npos);
  EXPECT_EQ(analysis::render_json(rep).at("extra").at("duration_criterion"), dc);
}

namespace {
/// The dose `reading` chooses according to PilotResult::readings (0 = none).
std::int64_t chosen_under(const analysis::PilotResult& r, const analysis::PilotReading& reading) {
  for (const auto& c : r.readings)
    if (c.reading == reading) return c.chosen_bytes.value_or(0);
  ADD_FAILURE() << "reading " << reading.text() << " not evaluated";
  return -1;
}
}  // namespace

// Reading of EAGAIN (campaigns/README.md "Assumptions"): on 6.1 a write the kernel could not
// fully satisfy returns EAGAIN. Default (interface-error): the dose fails. partial-reclaim: it is
// a partial reclaim judged by the 80% criterion, so a 95% write passes and a 70% one fails.
TEST(Pilot, EagainReadingsChooseDifferentDoses) {
  const auto path = golden::temp_db("pilot_eagain_readings");
  analysis::SyntheticDose ok{32 * MiB, 0.4, 0.95};
  analysis::SyntheticDose eagain95{64 * MiB, 0.4, 0.95, EAGAIN};
  analysis::SyntheticDose eagain70{96 * MiB, 0.4, 0.70, EAGAIN};
  analysis::write_synthetic_pilot(path, {ok, eagain95, eagain70}, 1, 5);
  using R = analysis::PilotReading;
  const R partial{R::Restoration::Clean, R::Eagain::PartialReclaim};

  const auto dflt = analysis::select_dose(path);  // the campaign's default reading
  ASSERT_TRUE(dflt.chosen_bytes);
  EXPECT_EQ(*dflt.chosen_bytes, 32 * MiB);
  EXPECT_TRUE(dflt.doses[1].set_aside.empty());
  ASSERT_EQ(dflt.readings.size(), 4u);
  EXPECT_EQ(chosen_under(dflt, R{}), 32 * MiB);
  EXPECT_EQ(chosen_under(dflt, partial), 64 * MiB);

  analysis::PilotRule rule;
  rule.reading = partial;
  const auto r = analysis::select_dose(path, rule);
  ASSERT_TRUE(r.chosen_bytes);
  EXPECT_EQ(*r.chosen_bytes, 64 * MiB);
  EXPECT_TRUE(r.doses[1].eligible);
  EXPECT_EQ(r.doses[1].eagain, 1);
  ASSERT_EQ(r.doses[1].set_aside.size(), 1u);
  EXPECT_EQ(r.doses[1].set_aside[0], std::string("pilot-vm0-slow-structured-dose64: interface error: memory.reclaim "
                                                  "write errno 11 (") + std::strerror(EAGAIN) + ")");
  EXPECT_FALSE(r.doses[2].eligible);  // EAGAIN set aside, 70% < 80% still fails
  ASSERT_EQ(r.doses[2].failed.size(), 1u);
  EXPECT_TRUE(any_contains(r.doses[2].failed, "achieved (pgsteal x page size across the write) 0.70"));
  EXPECT_EQ(chosen_under(r, R{}), 32 * MiB);  // the other reading is still reported

  // Report: the summary names the reading, the table beside Table 3 gives every reading's dose.
  const auto rep = analysis::pilot_report(path, r);
  const std::string md = analysis::render_markdown(rep);
  EXPECT_NE(md.find("Reading (campaign YAML eligibility.restoration, eligibility.eagain): restoration clean, EAGAIN "
                    "partial-reclaim."), std::string::npos) << md;
  ASSERT_EQ(rep.tables.size(), 2u);
  const auto& t = rep.tables[1];
  EXPECT_EQ(t.id, "table3_readings");
  ASSERT_EQ(t.rows.size(), 4u);
  for (const auto& row : t.rows) {
    const bool mine = row[0] == "clean" && row[1] == "partial-reclaim";
    EXPECT_EQ(row[4], mine ? "yes" : "-") << nlohmann::json(row).dump();
    if (row[1] == "partial-reclaim") {
      EXPECT_EQ(row[2], "32, 64");
      EXPECT_EQ(row[3].get<double>(), 64.0);
    } else {
      EXPECT_EQ(row[2], "32");
      EXPECT_EQ(row[3].get<double>(), 32.0);
    }
  }
  EXPECT_TRUE(any_contains(rep.tables[0].notes, "64 MiB, set aside by this reading (restoration clean, EAGAIN "
                                                "partial-reclaim): pilot-vm0-slow-structured-dose64: interface error"));
  EXPECT_EQ(rep.extra.at("reading").at("eagain"), "partial-reclaim");
  EXPECT_EQ(rep.extra.at("readings").size(), 4u);
}

// Reading of "valid restoration telemetry": restoration.clean = 1 (default), or the case's own
// teardown verified with VM state set aside (case-teardown). MemAvailable below the VM's
// baseline and swap in use on a device the case did not enable are VM state; a cgroup left
// behind or an unreadable /proc/swaps is not.
TEST(Pilot, RestorationReadingsChooseDifferentDoses) {
  const auto path = golden::temp_db("pilot_restoration_readings");
  std::vector<analysis::SyntheticDose> doses{{16 * MiB, 0.3, 1.1}, {32 * MiB, 0.3, 1.1}, {64 * MiB, 0.3, 1.1},
                                             {96 * MiB, 0.3, 1.1}};
  for (std::size_t i = 1; i < doses.size(); ++i) doses[i].restoration_clean = false;  // the slow-structured case
  analysis::write_synthetic_pilot(path, doses, 1, 5);
  const std::string mem = "MemAvailable 700 MiB after drop_caches and compaction is 150 MiB below the VM's first-case "
                          "baseline 850 MiB (case pilot-vm0-slow-structured-dose16; tolerance 97 MiB = 10% of MemTotal)";
  auto set_problems = [&](int dose_mib, const std::vector<std::string>& problems) {
    const nlohmann::json restoration{{"clean", false}, {"problems", problems}};
    const nlohmann::json vm{{"baseline_check", {{"judged", true}, {"within", false}, {"problem", mem}}}};
    results::Db db(path, results::Db::Mode::ReadWrite);
    results::Stmt u(db, "UPDATE cases SET outcome_json = json_set(outcome_json, '$.restoration', json(?1), "
                        "'$.vm_state', json(?2)) WHERE case_id = ?3");
    u.bind(1, restoration.dump()).bind(2, vm.dump()).bind(3, "pilot-vm0-slow-structured-dose" + std::to_string(dose_mib));
    u.run();
  };
  set_problems(32, {mem, "swap in use: /dev/vdb2 holds 2048 KiB"});           // VM state only
  set_problems(64, {mem, "cgroup /sys/fs/cgroup/harness/bg still exists"});   // the case's own teardown failed
  set_problems(96, {"swap in use: /proc/swaps unreadable holds 1 KiB"});      // nothing known: not VM state

  const auto clean = analysis::select_dose(path);
  ASSERT_TRUE(clean.chosen_bytes);
  EXPECT_EQ(*clean.chosen_bytes, 16 * MiB);
  ASSERT_EQ(clean.doses[1].failed.size(), 1u);
  EXPECT_EQ(clean.doses[1].failed[0],
            "pilot-vm0-slow-structured-dose32: restoration not clean, VM state only (restoration: case-teardown sets it "
            "aside): " + mem + "; swap in use: /dev/vdb2 holds 2048 KiB");

  using R = analysis::PilotReading;
  analysis::PilotRule rule;
  rule.reading.restoration = R::Restoration::CaseTeardown;
  const auto teardown = analysis::select_dose(path, rule);
  ASSERT_TRUE(teardown.chosen_bytes);
  EXPECT_EQ(*teardown.chosen_bytes, 32 * MiB);
  EXPECT_TRUE(teardown.doses[1].eligible);
  EXPECT_EQ(teardown.doses[1].set_aside.size(), 1u);
  EXPECT_FALSE(teardown.doses[2].eligible);
  EXPECT_TRUE(any_contains(teardown.doses[2].failed, "restoration not clean: " + mem +
                                                         "; cgroup /sys/fs/cgroup/harness/bg still exists"));
  EXPECT_FALSE(teardown.doses[3].eligible);
  EXPECT_TRUE(any_contains(teardown.doses[3].failed, "/proc/swaps unreadable"));
  EXPECT_EQ(chosen_under(teardown, R{}), 16 * MiB);
  EXPECT_EQ(chosen_under(teardown, {R::Restoration::CaseTeardown, R::Eagain::PartialReclaim}), 32 * MiB);
}
