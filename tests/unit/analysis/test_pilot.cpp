// Pilot dose selection: the largest eligible dose is chosen; every failed criterion is named.
#include "analysis/pilot.hpp"
#include "analysis/synthetic.hpp"

#include "results/db.hpp"

#include "golden_db.hpp"

#include <gtest/gtest.h>

#include <cerrno>

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
  EXPECT_TRUE(any_contains(f, "achieved (across the write; conservative not measured) 0.70 of the request < 0.80"));
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

TEST(Pilot, ConcurrentLimitReclaimDoesNotCountAsAchieved) {
  const auto path = golden::temp_db("pilot_conservative");
  analysis::SyntheticDose d64{64 * MiB, 0.4, 0.95};
  d64.min_conservative_ratio = 0.85;
  analysis::SyntheticDose d96{96 * MiB, 0.5, 0.90};  // across the write: 0.90 >= 0.80 ...
  d96.min_conservative_ratio = 0.70;                  // ... but 0.20 of it was limit reclaim beside the write
  analysis::write_synthetic_pilot(path, {d64, d96}, 1, 5);
  const auto r = analysis::select_dose(path);
  ASSERT_EQ(r.doses.size(), 2u);
  EXPECT_TRUE(r.doses[0].eligible);
  EXPECT_FALSE(r.doses[1].eligible);
  EXPECT_NEAR(*r.doses[1].min_achieved_ratio, 0.90, 1e-6);
  EXPECT_NEAR(*r.doses[1].min_conservative_ratio, 0.70, 1e-6);
  EXPECT_EQ(r.doses[1].fallback_requests, 0);
  ASSERT_EQ(r.doses[1].failed.size(), 1u);
  EXPECT_EQ(r.doses[1].failed[0], "pilot-vm0-slow-structured-dose96: conservative achieved 0.70 of the request < 0.80");
  ASSERT_TRUE(r.chosen_bytes);
  EXPECT_EQ(*r.chosen_bytes, 64 * MiB);
  const auto rep = analysis::pilot_report(path, r);
  const auto& t = rep.tables.at(0);
  EXPECT_EQ(t.rows[1][7], "conservative");  // rule basis column
  EXPECT_NEAR(t.rows[1][5].get<double>(), 0.90, 1e-6);  // both figures shown
  EXPECT_NEAR(t.rows[1][6].get<double>(), 0.70, 1e-6);
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
    db.exec("UPDATE cases SET outcome_json = '{\"oom_kills\":{\"bg\":0,\"fg\":1}}' "
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
  ASSERT_EQ(rep.tables.size(), 1u);
  EXPECT_TRUE(any_contains(rep.tables[0].notes, "Duration criterion meaningless"));
  const auto& dc = rep.extra.at("duration_criterion");
  EXPECT_FALSE(dc.at("valid").get<bool>());
  EXPECT_EQ(dc.at("accelerators").at("tcg").get<int>(), 3);
  EXPECT_DOUBLE_EQ(dc.at("max_duration_s").get<double>(), 1.0);
  EXPECT_NE(dc.at("statement").get<std::string>().find("accelerator TCG"), std::string::npos);
  EXPECT_EQ(analysis::render_json(rep).at("extra").at("duration_criterion"), dc);
}
