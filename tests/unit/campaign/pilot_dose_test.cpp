// design.dose_mib {from_pilot: PATH}: the dose comes from the pilot rule over a pilot DB at
// plan time, and the pilot DB's SHA-256 is part of the preregistered plan.
#include "analysis/report/analysis_report.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/model/ab_settings.hpp"
#include "harness/campaign/plan/pilot_dose.hpp"
#include "harness/campaign/plan/pilot_match.hpp"
#include "harness/campaign/plan/schedule.hpp"
#include "harness/digest/sha256.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <cstdlib>
#include <functional>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include "analysis/simulate/synthetic.hpp"
#include "test_files.hpp"
#include "tests/common/fake_agent.hpp"
#include "tests/common/problem_text.hpp"
#include "tests/common/run_harness.hpp"

namespace hc = harness::campaign;
using testfiles::TempDir;
using testfiles::read;
using testfiles::write_token;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

constexpr std::int64_t kMiB = 1 << 20;

/// check_pilot_kernel's refusal, "" when it passes.
std::string pilot_kernel_refusal(const hc::Campaign& c, const std::vector<std::string>& pilot,
                                 const std::vector<std::pair<std::string, std::string>>& vms) {
  return test_support::problem_text(hc::check_pilot_kernel(c, pilot, vms));
}

/// A pilot DB as `harness run campaigns/pilot.yaml` leaves it: the plan (4 doses x 4
/// regimes) and one completed case per row, every criterion of the rule met, each write
/// taking `seconds(dose_mib, regime)`.
/// `edit_yaml` changes pilot.yaml's text first (another bg limit, other phases, ...).
void build_pilot_db(const std::string& path, const std::function<double(std::int64_t, const std::string&)>& seconds,
                    const std::function<void(std::string&)>& edit_yaml = {}) {
  const std::string file = std::string(HARNESS_SOURCE_DIR) + "/campaigns/pilot.yaml";
  std::string text = read(file);
  if (edit_yaml) edit_yaml(text);
  const auto c = hc::parse_campaign(text, file);
  const auto s = hc::plan(c);
  results::Db db(path, results::Db::Mode::Create);
  hc::store_plan(db, c, s);
  const std::int64_t t0 = 1'000'000'000'000;
  db.transaction([&] {
    for (const auto& k : s.cases) {
      const std::int64_t dose = *k.dose_bytes;
      results::Stmt ins(db,
                        "INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, dose_bytes, status, "
                        "accelerator, kernel_release, page_size_bytes, spec_json, outcome_json) VALUES "
                        "(?1, 'pilot', ?2, ?3, ?4, 'bounded-reclaim', ?5, 'completed', 'kvm', '6.1.0-57-cloud-amd64', "
                        "4096, ?6, '{\"zram_device\":\"/dev/zram0\",\"setup_steps\":[{\"step\":\"swapon /dev/zram0 prio 100\","
                        "\"errno\":0}]}')");
      ins.bind(1, k.case_id).bind(2, k.vm).bind(3, k.regime).bind(4, k.repeat).bind(5, dose).bind(6, k.spec.dump());
      ins.run();
      const char* phases[] = {"warmup", "pressure", "recovery", "restoration"};
      for (int i = 0; i < 4; ++i) {
        results::Stmt p(db, "INSERT INTO phases(case_id, phase, start_ns, end_ns) VALUES (?1, ?2, ?3, ?4)");
        p.bind(1, k.case_id).bind(2, phases[i]).bind(3, t0 + i * 10'000'000'000L).bind(4, t0 + (i + 1) * 10'000'000'000L);
        p.run();
      }
      for (int i = 0; i <= 10; ++i) {  // 1 Hz through the pressure phase [10 s, 20 s]
        results::Stmt t(db,
                        "INSERT INTO telemetry(case_id, t_ns, phase, bg_some_us, bg_oom_kill, fg_oom_kill, "
                        "zram_orig_data_bytes, zram_swap_used_kib, read_ns) VALUES (?1, ?2, 'pressure', ?3, 0, 0, ?4, ?5, ?2)");
        t.bind(1, k.case_id).bind(2, t0 + 10'000'000'000L + i * 1'000'000'000L).bind(3, i * 5000);
        t.bind(4, (i + 1) * 10 * kMiB).bind(5, (i + 1) * 4096);
        t.run();
      }
      results::Stmt e(db, "INSERT INTO controller_events(case_id, t_ns, kind) VALUES (?1, ?2, 'trigger')");
      e.bind(1, k.case_id).bind(2, t0 + 13'000'000'000L);
      e.run();
      const auto dur = static_cast<std::int64_t>(seconds(dose / kMiB, k.regime) * 1e9);
      results::Stmt a(db,
                      "INSERT INTO reclaim_actions(case_id, requested_bytes, start_ns, end_ns, duration_ns, write_errno, "
                      "achieved_bytes, achieved_counter, concurrent_estimate_bytes, achieved_conservative_bytes) "
                      "VALUES (?1, ?2, ?3, ?4, ?5, 0, ?2, 'pgsteal', 0, ?2)");
      a.bind(1, k.case_id).bind(2, dose).bind(3, t0 + 13'000'000'000L).bind(4, t0 + 13'000'000'000L + dur).bind(5, dur);
      a.run();
      results::Stmt r(db, "INSERT INTO restoration(case_id, start_ns, end_ns, clean) VALUES (?1, ?2, ?3, 1)");
      r.bind(1, k.case_id).bind(2, t0 + 30'000'000'000L).bind(3, t0 + 31'000'000'000L);
      r.run();
    }
  });
}

/// Replaces the one occurrence of `from` in `text` by `to`.
void replace_once(std::string& text, const std::string& from, const std::string& to) {
  const auto p = text.find(from);
  ASSERT_NE(p, std::string::npos) << from;
  ASSERT_EQ(text.find(from, p + 1), std::string::npos) << from;
  text.replace(p, from.size(), to);
}

/// confirmatory.yaml's text with its dose taken from `pilot_db`; `more` is added to the
/// dose_mib mapping (", accept_differences: [...]").
std::string confirmatory_text(const std::string& pilot_db, const std::string& more = "") {
  std::string text = read(std::string(HARNESS_SOURCE_DIR) + "/campaigns/confirmatory.yaml");
  replace_once(text, "  dose_mib: 96\n", "  dose_mib: {from_pilot: " + pilot_db + more + "}\n");
  return text;
}

/// confirmatory.yaml with its dose taken from `pilot_db` (see confirmatory_text).
hc::Campaign confirmatory_from(const std::string& pilot_db, const std::string& more = "",
                               const std::function<void(std::string&)>& edit_yaml = {}) {
  std::string text = confirmatory_text(pilot_db, more);
  if (edit_yaml) edit_yaml(text);
  return hc::parse_campaign(text, "confirmatory-from-pilot.yaml");
}

}  // namespace

TEST(PilotDose, ResolvesTheLargestEligibleDoseAndHashesThePilotDb) {
  TempDir d;
  build_pilot_db(d / "pilot.db", [](std::int64_t, const std::string&) { return 0.2; });
  const auto r = hc::resolve_pilot_dose(d / "pilot.db", {1.0, 0.8, {}});
  EXPECT_EQ(r.dose_bytes, 96 * kMiB);
  EXPECT_EQ(r.sha256_hex, harness::digest::sha256_file(d / "pilot.db"));

  const auto c = confirmatory_from(d / "pilot.db");
  EXPECT_FALSE(c.dose_mib.has_value());
  EXPECT_EQ(c.dose_from_pilot, d / "pilot.db");
  const auto s = hc::plan(c);
  ASSERT_EQ(s.cases.size(), 180u);
  for (const auto& k : s.cases)
    if (k.configuration == "bounded-reclaim") {
      EXPECT_EQ(k.dose_bytes, 96 * kMiB);
      EXPECT_EQ(k.spec.at("dose_bytes"), 96 * kMiB);
    }
  const auto doc = nlohmann::json::parse(s.json_text);
  EXPECT_EQ(doc.at("dose_from_pilot"),
            (nlohmann::json{{"dose_bytes", 96 * kMiB}, {"pilot_db_sha256", r.sha256_hex}}));
  // The same dose from a fixed `dose_mib: 96` is another plan: the pilot's hash is in it.
  const auto fixed = hc::plan(hc::load_campaign(std::string(HARNESS_SOURCE_DIR) + "/campaigns/confirmatory.yaml"));
  EXPECT_NE(fixed.sha256_hex, s.sha256_hex);
}

TEST(PilotDose, AnotherPilotDbChangesTheDoseAndTheHash) {
  TempDir d;
  build_pilot_db(d / "a.db", [](std::int64_t, const std::string&) { return 0.2; });
  // 96 MiB took 1.5 s in one regime: not eligible, 64 MiB is the largest eligible dose.
  build_pilot_db(d / "b.db", [](std::int64_t dose, const std::string& regime) {
    return dose == 96 && regime == "fast-random" ? 1.5 : 0.2;
  });
  const auto a = hc::plan(confirmatory_from(d / "a.db"));
  const auto b = hc::plan(confirmatory_from(d / "b.db"));
  EXPECT_NE(a.sha256_hex, b.sha256_hex);
  EXPECT_EQ(nlohmann::json::parse(b.json_text).at("dose_from_pilot").at("dose_bytes"), 64 * kMiB);
  // Same dose, different pilot DB bytes: the hash still changes (the DB is preregistered).
  build_pilot_db(d / "c.db", [](std::int64_t, const std::string&) { return 0.3; });
  const auto c = hc::plan(confirmatory_from(d / "c.db"));
  EXPECT_EQ(nlohmann::json::parse(c.json_text).at("dose_from_pilot").at("dose_bytes"), 96 * kMiB);
  EXPECT_NE(a.sha256_hex, c.sha256_hex);
  EXPECT_EQ(hc::plan(confirmatory_from(d / "a.db")).sha256_hex, a.sha256_hex);
}

TEST(PilotDose, NoEligibleDoseIsAClearError) {
  TempDir d;
  build_pilot_db(d / "slow.db", [](std::int64_t, const std::string&) { return 2.0; });
  try {
    hc::plan(confirmatory_from(d / "slow.db"));
    ADD_FAILURE() << "planned with no eligible dose";
  } catch (const hc::PilotDoseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("design.dose_mib.from_pilot: " + (d / "slow.db") + ": no eligible dose (pilot rule)"));
    EXPECT_THAT(e.what(), HasSubstr("\n  16 MiB: "));
    EXPECT_THAT(e.what(), HasSubstr("\n  96 MiB: "));
  }
  EXPECT_THROW(hc::resolve_pilot_dose(d / "missing.db", {1.0, 0.8, {}}), hc::PilotDoseError);
}

TEST(PilotDose, RelativePathIsTheCampaignFilesDirectory) {
  TempDir d;
  build_pilot_db(d / "pilot.db", [](std::int64_t, const std::string&) { return 0.2; });
  std::string text = read(std::string(HARNESS_SOURCE_DIR) + "/campaigns/confirmatory.yaml");
  const auto p = text.find("  dose_mib: 96\n");
  ASSERT_NE(p, std::string::npos);
  text.replace(p, std::string("  dose_mib: 96\n").size(), "  dose_mib: {from_pilot: pilot.db}\n");
  {
    std::ofstream o(d / "c.yaml");
    o << text;
  }
  const auto c = hc::load_campaign(d / "c.yaml");
  EXPECT_EQ(c.dose_from_pilot, d / "pilot.db");
  EXPECT_EQ(nlohmann::json::parse(hc::plan(c).json_text).at("dose_from_pilot").at("dose_bytes"), 96 * kMiB);
}

TEST(PilotDose, HarnessPlanSaysWhereTheDoseCameFrom) {
  TempDir d;
  build_pilot_db(d / "pilot.db", [](std::int64_t dose, const std::string&) { return dose == 96 ? 1.2 : 0.2; });
  std::string text = read(std::string(HARNESS_SOURCE_DIR) + "/campaigns/confirmatory.yaml");
  const auto p = text.find("  dose_mib: 96\n");
  ASSERT_NE(p, std::string::npos);
  text.replace(p, std::string("  dose_mib: 96\n").size(), "  dose_mib: {from_pilot: pilot.db}\n");
  // Nine local guests do not fit this machine: the capacity check would refuse the plan
  // before the pilot rule is reached. Planning boots nothing, so overcommit is harmless here.
  const auto k = text.find("  kind: local-qemu\n");
  ASSERT_NE(k, std::string::npos);
  text.insert(k + std::string("  kind: local-qemu\n").size(), "  overcommit: true\n");
  testfiles::write(d / "c.yaml", testfiles::with_fixed_pin(text));
  const std::string exe = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
  // An empty cache: the guest-kernel rule at plan reads no image of this machine.
  ASSERT_EQ(std::system(("XDG_CACHE_HOME=" + (d / "cache") + " " + exe + " plan " + (d / "c.yaml") + " --hosts " + testfiles::nine_hosts(d / "hosts.yaml") +
                         " > " + (d / "out.txt") + " 2>&1")
                            .c_str()),
            0);
  EXPECT_THAT(read(d / "out.txt"),
              HasSubstr("dose 64 MiB chosen by the pilot rule from " + (d / "pilot.db") + " (sha256 " +
                        harness::digest::sha256_file(d / "pilot.db") + ", preregistered with the plan)"));
}

namespace {
/// Marks every case of a pilot DB as run under `accelerator` (as cases.accelerator records it).
void set_accelerator(const std::string& db_path, const std::string& accelerator) {
  results::Db db(db_path, results::Db::Mode::ReadWrite);
  results::Stmt u(db, "UPDATE cases SET accelerator = ?1");
  u.bind(1, accelerator);
  u.run();
}
}  // namespace

TEST(PilotDose, ATcgPilotIsRefusedUnlessDeclaredAPipelineTest) {
  TempDir d;
  build_pilot_db(d / "pilot.db", [](std::int64_t, const std::string&) { return 0.2; });
  set_accelerator(d / "pilot.db", "tcg");
  auto c = confirmatory_from(d / "pilot.db");
  try {
    hc::plan(c);
    ADD_FAILURE() << "a dose from a TCG pilot was planned";
  } catch (const hc::PilotDoseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("16 of 16 pilot case(s) ran under TCG"));
    EXPECT_THAT(e.what(), HasSubstr("duration criterion (every write within 1 s) is meaningless there"));
    EXPECT_THAT(e.what(), HasSubstr("(96 MiB) is not one to preregister"));
    EXPECT_THAT(e.what(), HasSubstr("--pipeline-test-dose"));
  }
  c.dose_pipeline_test = true;
  const auto s = hc::plan(c);
  const auto doc = nlohmann::json::parse(s.json_text);
  EXPECT_EQ(doc.at("dose_from_pilot").at("dose_bytes"), 96 * kMiB);
  EXPECT_EQ(doc.at("dose_from_pilot").at("pipeline_test"),
            (nlohmann::json{{"declared", true}, {"pilot_accelerators", {{"tcg", 16}}}}));
  // The report says so, from the plan stored in campaign_meta.
  const auto w = analysis::pipeline_test_dose_warning({{"schedule_json", s.json_text}});
  EXPECT_THAT(w, HasSubstr("PIPELINE TEST: the bounded-reclaim dose (96 MiB)"));
  EXPECT_THAT(w, HasSubstr("{\"tcg\":16}"));
  EXPECT_THAT(w, HasSubstr("not a preregistered dose"));
  // Undeclared plans carry no such key (their hash is as before) and no warning.
  set_accelerator(d / "pilot.db", "kvm");
  c.dose_pipeline_test = false;
  const auto k = hc::plan(c);
  EXPECT_FALSE(nlohmann::json::parse(k.json_text).at("dose_from_pilot").contains("pipeline_test"));
  EXPECT_EQ(analysis::pipeline_test_dose_warning({{"schedule_json", k.json_text}}), "");
}

TEST(PilotDose, HarnessPlanRefusesATcgPilotAndStoresTheDeclaration) {
  TempDir d;
  build_pilot_db(d / "pilot.db", [](std::int64_t, const std::string&) { return 0.2; });
  set_accelerator(d / "pilot.db", "tcg");
  std::string text = read(std::string(HARNESS_SOURCE_DIR) + "/campaigns/confirmatory.yaml");
  const auto p = text.find("  dose_mib: 96\n");
  ASSERT_NE(p, std::string::npos);
  text.replace(p, std::string("  dose_mib: 96\n").size(), "  dose_mib: {from_pilot: pilot.db}\n");
  // Nine local guests do not fit this machine: the capacity check would refuse the plan
  // before the pilot rule is reached. Planning boots nothing, so overcommit is harmless here.
  const auto k = text.find("  kind: local-qemu\n");
  ASSERT_NE(k, std::string::npos);
  text.insert(k + std::string("  kind: local-qemu\n").size(), "  overcommit: true\n");
  testfiles::write(d / "c.yaml", testfiles::with_fixed_pin(text));
  const std::string exe = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
  auto sh = [&](const std::string& args) {
    const int rc = std::system(("XDG_CACHE_HOME=" + (d / "cache") + " " + exe + " " + args + " > " + (d / "out.txt") + " 2>&1").c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  EXPECT_EQ(sh("plan " + (d / "c.yaml") + " " + (d / "c.db")), 2) << read(d / "out.txt");
  EXPECT_THAT(read(d / "out.txt"), HasSubstr("ran under TCG"));
  EXPECT_FALSE(std::filesystem::exists(d / "c.db"));  // refused before anything is stored
  ASSERT_EQ(sh("plan " + (d / "c.yaml") + " " + (d / "c2.db") + " --pipeline-test-dose"), 0) << read(d / "out.txt");
  EXPECT_THAT(read(d / "out.txt"), HasSubstr("PIPELINE TEST: --pipeline-test-dose declares this dose a pipeline test"));
  {
    results::Db db(d / "c2.db", results::Db::Mode::ReadOnly);
    results::Stmt q(db, "SELECT json_extract(value, '$.dose_from_pilot.pipeline_test.declared') FROM campaign_meta "
                        "WHERE key = 'schedule_json'");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.int64(0), 1);
  }
  // `harness run` plans again from the same file: it takes the declaration from the stored
  // plan (no TCG refusal, no changed-plan refusal) and only then meets the missing hosts file.
  EXPECT_NE(sh("run " + (d / "c.yaml") + " " + (d / "c2.db") + " --hosts " + (d / "no-such-hosts.yaml")), 0);
  EXPECT_THAT(read(d / "out.txt"), Not(HasSubstr("ran under TCG")));
  EXPECT_THAT(read(d / "out.txt"), Not(HasSubstr("is not the plan of")));
  EXPECT_THAT(read(d / "out.txt"), HasSubstr("no-such-hosts.yaml"));
  // The flag on a campaign whose dose is not from a pilot is a usage error.
  EXPECT_EQ(sh("plan " + std::string(HARNESS_SOURCE_DIR) + "/campaigns/smoke.yaml --pipeline-test-dose"), 64)
      << read(d / "out.txt");
}

// ---- the pilot DB against the campaign that takes its dose (pilot_match.hpp) ----

namespace {
/// What plan(c) throws, "" when it plans.
std::string plan_error(const hc::Campaign& c) {
  try {
    hc::plan(c);
  } catch (const hc::PilotDoseError& e) {
    return e.what();
  }
  return "";
}
nlohmann::json pilot_part(const hc::Campaign& c) { return nlohmann::json::parse(hc::plan(c).json_text).at("dose_from_pilot"); }
const auto kFast = [](std::int64_t, const std::string&) { return 0.2; };
/// A pilot with a 500 MiB bg limit (and so a 520 MiB allocation: it must exceed the limit).
const auto bg500 = [](std::string& t) {
  replace_once(t, "bg_memory_max_mib: 300", "bg_memory_max_mib: 500");
  replace_once(t, "allocation_mib: 320", "allocation_mib: 520");
};
}  // namespace

TEST(PilotMatch, APilotRunWithAnotherBgLimitIsRefusedNamingBothValuesAndFiles) {
  TempDir d;
  build_pilot_db(d / "pilot.db", kFast, bg500);
  const std::string why = plan_error(confirmatory_from(d / "pilot.db"));
  EXPECT_THAT(why, HasSubstr("confirmatory-from-pilot.yaml: field design.dose_mib.from_pilot: the pilot DB " + (d / "pilot.db") +
                             " (its campaign " + HARNESS_SOURCE_DIR + "/campaigns/pilot.yaml) differs"));
  EXPECT_THAT(why, HasSubstr("\n  cgroups.bg_memory_max_mib: pilot 500, this campaign 300 (to accept: cgroups.bg_memory_max_mib)"));
  EXPECT_THAT(why, HasSubstr("\n  pressure.allocation_mib: pilot 520, this campaign 320 (to accept: pressure.allocation_mib)"));
  EXPECT_THAT(why, Not(HasSubstr("pilot_choice")));  // the same thresholds choose the same dose
  // One declared, one not: still refused, for the other one only.
  const std::string one = plan_error(confirmatory_from(d / "pilot.db", ", accept_differences: [cgroups.bg_memory_max_mib]"));
  EXPECT_THAT(one, Not(HasSubstr("cgroups.bg_memory_max_mib: pilot")));
  EXPECT_THAT(one, HasSubstr("pressure.allocation_mib: pilot 520"));
  // Declared: planned, and the plan records the differences.
  const auto c =
      confirmatory_from(d / "pilot.db", ", accept_differences: [cgroups.bg_memory_max_mib, pressure.allocation_mib]");
  EXPECT_EQ(c.dose_accept_differences, (std::vector<std::string>{"cgroups.bg_memory_max_mib", "pressure.allocation_mib"}));
  const auto p = pilot_part(c);
  EXPECT_EQ(p.at("dose_bytes"), 96 * kMiB);
  EXPECT_EQ(p.at("accepted_differences"),
            (nlohmann::json::array({{{"setting", "cgroups.bg_memory_max_mib"}, {"pilot", "500"}, {"campaign", "300"}},
                                    {{"setting", "pressure.allocation_mib"}, {"pilot", "520"}, {"campaign", "320"}}})));
  EXPECT_FALSE(p.contains("pilot_rule_dose_bytes"));
  // A group covers its keys.
  EXPECT_EQ(plan_error(confirmatory_from(d / "pilot.db", ", accept_differences: [cgroups, pressure]")), "");
  // A matching pilot: no key added, so such plans keep their hash.
  build_pilot_db(d / "same.db", kFast);
  EXPECT_EQ(pilot_part(confirmatory_from(d / "same.db")),
            (nlohmann::json{{"dose_bytes", 96 * kMiB}, {"pilot_db_sha256", harness::digest::sha256_file(d / "same.db")}}));
}

// The rehearsal analysis/README.md documents: a synthetic pilot DB that stores the shipped
// pilot campaign's text is a dose source for the shipped confirmatory campaign (their settings
// agree); one written without it is refused, and the refusal says what to give.
TEST(PilotMatch, TheDocumentedSyntheticPilotIsADoseSourceWhenItStoresThePilotsYaml) {
  TempDir d;
  const std::vector<analysis::SyntheticDose> doses{
      {16 * kMiB, 0.2, 1.0}, {32 * kMiB, 0.4, 0.95}, {64 * kMiB, 0.8, 0.9}, {96 * kMiB, 1.4, 0.9}};
  analysis::write_synthetic_pilot(d / "syn.db", doses, 1, 10,
                                  read(std::string(HARNESS_SOURCE_DIR) + "/campaigns/pilot.yaml"));
  EXPECT_EQ(plan_error(confirmatory_from(d / "syn.db")), "");
  EXPECT_EQ(pilot_part(confirmatory_from(d / "syn.db")).at("dose_bytes"), 64 * kMiB) << "96 MiB took 1.4 s";
  analysis::write_synthetic_pilot(d / "bare.db", doses, 1, 10);
  EXPECT_THAT(plan_error(confirmatory_from(d / "bare.db")), HasSubstr("given campaign_yaml"));
}

TEST(PilotMatch, EligibilityThatChoosesAnotherDoseThanThePilotsIsRefusedUnlessDeclared) {
  TempDir d;
  // The pilot's own rule (1 s): 96 MiB took 1.5 s once, so `harness pilot-select` chooses 64 MiB.
  build_pilot_db(d / "pilot.db",
                 [](std::int64_t dose, const std::string& regime) { return dose == 96 && regime == "fast-random" ? 1.5 : 0.2; });
  const auto two_s = [](std::string& t) { replace_once(t, "  max_duration_s: 1\n", "  max_duration_s: 2\n"); };
  std::string why = plan_error(confirmatory_from(d / "pilot.db", "", two_s));
  EXPECT_THAT(why, HasSubstr("\n  eligibility.max_duration_s: pilot 1.0, this campaign 2.0 (to accept: eligibility.max_duration_s)"));
  EXPECT_THAT(why, HasSubstr("\n  pilot_choice: the pilot's eligibility {\"eagain\":\"interface-error\",\"max_duration_s\":1.0,"));
  EXPECT_THAT(why, HasSubstr(" chooses 64 MiB, this campaign's eligibility {\"eagain\":\"interface-error\",\"max_duration_s\":2.0,"));
  EXPECT_THAT(why, HasSubstr(" chooses 96 MiB (to accept: pilot_choice)"));
  // Accepting the thresholds is not accepting another dose.
  why = plan_error(confirmatory_from(d / "pilot.db", ", accept_differences: [eligibility.max_duration_s]", two_s));
  EXPECT_THAT(why, Not(HasSubstr("eligibility.max_duration_s: pilot")));
  EXPECT_THAT(why, HasSubstr("pilot_choice: "));
  // Both declared: this campaign's rule chooses the dose, and the plan says what the pilot's chose.
  const auto p = pilot_part(confirmatory_from(d / "pilot.db", ", accept_differences: [eligibility, pilot_choice]", two_s));
  EXPECT_EQ(p.at("dose_bytes"), 96 * kMiB);
  EXPECT_EQ(p.at("pilot_rule_dose_bytes"), 64 * kMiB);
  EXPECT_EQ(p.at("accepted_differences").size(), 1u);
  EXPECT_EQ(p.at("accepted_differences")[0].at("setting"), "eligibility.max_duration_s");
}

TEST(PilotMatch, PhasesRegimesBackendPressureAndVmShapeAreComparedRegimeOrderIsNot) {
  TempDir d;
  build_pilot_db(d / "pilot.db", kFast, [](std::string& t) {
    replace_once(t, "pressure: 300,", "pressure: 200,");
    replace_once(t, "{name: fast-random, rate_mib_s: 64,", "{name: fast-random, rate_mib_s: 32,");
    replace_once(t, "algorithm: lzo-rle", "algorithm: lz4");
    replace_once(t, "active_set_mib: 64", "active_set_mib: 32");
    replace_once(t, "memory_mib: 1024", "memory_mib: 2048");
  });
  const std::string why = plan_error(confirmatory_from(d / "pilot.db"));
  EXPECT_THAT(why, HasSubstr("\n  phases_s.pressure: pilot 200, this campaign 300 (to accept: phases_s.pressure)"));
  EXPECT_THAT(why, HasSubstr("\n  regimes.fast-random.rate_mib_s: pilot 32.0, this campaign 64.0 (to accept: regimes)"));
  EXPECT_THAT(why, HasSubstr("\n  backend.zram.algorithm: pilot \"lz4\", this campaign \"lzo-rle\""));
  EXPECT_THAT(why, HasSubstr("\n  pressure.active_set_mib: pilot 32, this campaign 64"));
  EXPECT_THAT(why, HasSubstr("\n  vm.memory_mib: pilot 2048, this campaign 1024"));
  EXPECT_EQ(plan_error(confirmatory_from(d / "pilot.db", ", accept_differences: [phases_s, regimes, backend, pressure, vm]")), "");
  // The same regimes in another order are the same regimes.
  build_pilot_db(d / "order.db", kFast, [](std::string& t) {
    replace_once(t, "  - {name: slow-structured, rate_mib_s: 16, contents: structured}\n", "");
    replace_once(t, "  - {name: fast-random, rate_mib_s: 64, contents: random}\n",
                 "  - {name: fast-random, rate_mib_s: 64, contents: random}\n"
                 "  - {name: slow-structured, rate_mib_s: 16, contents: structured}\n");
  });
  EXPECT_EQ(plan_error(confirmatory_from(d / "order.db")), "");
  // A regime only the pilot ran.
  build_pilot_db(d / "extra.db", kFast, [](std::string& t) {
    replace_once(t, "  - {name: fast-random, rate_mib_s: 64, contents: random}\n",
                 "  - {name: fast-random, rate_mib_s: 64, contents: random}\n"
                 "  - {name: faster-random, rate_mib_s: 128, contents: random}\n");
  });
  EXPECT_THAT(plan_error(confirmatory_from(d / "extra.db")),
              HasSubstr("\n  regimes.faster-random.contents: pilot \"random\", this campaign (absent)"));
}

TEST(PilotMatch, AcceptDifferencesIsParsedStrictly) {
  const auto error = [](const std::string& more) {
    try {
      hc::parse_campaign(confirmatory_text("/nonexistent/pilot.db", more), "c.yaml");
    } catch (const hc::CampaignError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string text = confirmatory_text("/nonexistent/pilot.db");
  const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(text.find("  dose_mib: {from_pilot: /nonexistent")), '\n') + 1;
  const std::string at = "c.yaml:" + std::to_string(line) + ":";
  std::string e = error(", accept_differences: [bg_limit]");
  EXPECT_THAT(e, HasSubstr(at));
  EXPECT_THAT(e, HasSubstr("field design.dose_mib.accept_differences[0]: 'bg_limit' is not a setting compared with the pilot "
                           "(one of backend, backend.delayed_swapfile, backend.swapfile, backend.swapfile.path, "));
  EXPECT_THAT(e, HasSubstr(", cgroups, cgroups.bg_memory_high_mib, cgroups.bg_memory_max_mib, eligibility, "));
  EXPECT_THAT(e, HasSubstr(", vm, vm.memory_mib, vm.vcpus, regimes, guest_kernel, pilot_choice)"));
  e = error(", accept_differences: [guest_kernel, guest_kernel]");
  EXPECT_THAT(e, HasSubstr(at));
  EXPECT_THAT(e, HasSubstr("field design.dose_mib.accept_differences[1]: 'guest_kernel' is listed twice"));
  EXPECT_THAT(error(", accept_differences: guest_kernel"),
              HasSubstr("field design.dose_mib.accept_differences: expected a list of settings"));
  EXPECT_THAT(error(", accept_diferences: [guest_kernel]"), HasSubstr("accept_diferences"));
  EXPECT_EQ(error(", accept_differences: [guest_kernel, regimes, eligibility.eagain, backend.zram]"), "");
  // Every compared setting can be declared: each path is a name, or under regimes.
  const auto& names = hc::pilot_difference_names();
  for (const auto& p : hc::differing_settings(hc::pilot_match_settings(hc::parse_campaign(text, "c.yaml")), nlohmann::json::object()))
    EXPECT_TRUE(std::find(names.begin(), names.end(), p.path) != names.end() || p.path.rfind("regimes.", 0) == 0) << p.path;
}

TEST(PilotMatch, GuestKernelRule) {
  auto c = confirmatory_from("/nonexistent/pilot.db");
  c.file = "c.yaml";
  const std::vector<std::string> pilot{"6.1.0-57-cloud-amd64"};
  EXPECT_EQ(pilot_kernel_refusal(c, pilot, {{"vm0", "6.1.0-57-cloud-amd64"}, {"vm1", "6.1.0-57-cloud-amd64"}}), "");
  const std::string why = pilot_kernel_refusal(c, pilot, {{"vm0", "6.1.0-57-cloud-amd64"}, {"vm1", "6.12.9-amd64"}});
  EXPECT_THAT(why, HasSubstr("c.yaml: field design.dose_mib.from_pilot: the guests run another kernel than the pilot DB "
                             "/nonexistent/pilot.db"));
  EXPECT_THAT(why, HasSubstr("\n  vm1: kernel 6.12.9-amd64, the pilot's cases: 6.1.0-57-cloud-amd64\n"));
  EXPECT_THAT(why, Not(HasSubstr("vm0:")));
  EXPECT_THAT(why, HasSubstr("guest_kernel"));
  // A pilot whose cases ran two kernels matches no guest.
  EXPECT_THAT(pilot_kernel_refusal(c, {"6.1.0-57-cloud-amd64", "6.12.9-amd64"}, {{"vm0", "6.12.9-amd64"}}),
              HasSubstr("vm0: kernel 6.12.9-amd64, the pilot's cases: 6.1.0-57-cloud-amd64, 6.12.9-amd64"));
  c.dose_accept_differences = {"guest_kernel"};
  EXPECT_EQ(pilot_kernel_refusal(c, pilot, {{"vm1", "6.12.9-amd64"}}), "");
  c.dose_accept_differences.clear();
  c.dose_from_pilot.clear();
  EXPECT_EQ(pilot_kernel_refusal(c, pilot, {{"vm1", "6.12.9-amd64"}}), "");
}

TEST(PilotMatch, HarnessPlanComparesTheLocalImagesKernelAndPrintsDeclaredDifferences) {
  TempDir d;
  build_pilot_db(d / "pilot.db", kFast, bg500);
  // A built local image (only its manifest is read) with another kernel than the pilot's cases.
  std::filesystem::create_directories(d / "cache/reclaim-harness/image");
  testfiles::write(d / "cache/reclaim-harness/image/manifest.json",
                   R"({"kernel_release": "6.12.9-amd64", "artifacts_sha256": {}})");
  const auto write_campaign = [&](const std::string& accept) {
    std::string text = confirmatory_text("pilot.db", ", accept_differences: [" + accept + "]");
    replace_once(text, "  kind: local-qemu\n", "  kind: local-qemu\n  overcommit: true\n");  // 9 guests: planning boots none
    testfiles::write(d / "c.yaml", testfiles::with_fixed_pin(text));
  };
  const std::string exe = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
  auto sh = [&](const std::string& args) {
    const int rc = std::system(("XDG_CACHE_HOME=" + (d / "cache") + " " + exe + " " + args + " > " + (d / "out.txt") + " 2>&1").c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  write_campaign("cgroups, pressure");
  EXPECT_EQ(sh("plan " + (d / "c.yaml") + " " + (d / "c.db")), 2) << read(d / "out.txt");
  EXPECT_THAT(read(d / "out.txt"),
              HasSubstr("  vm0: kernel 6.12.9-amd64 (image " + (d / "cache/reclaim-harness/image") +
                        "), the pilot's cases: 6.1.0-57-cloud-amd64\n"));
  EXPECT_THAT(read(d / "out.txt"), HasSubstr("  vm8: kernel 6.12.9-amd64"));
  EXPECT_FALSE(std::filesystem::exists(d / "c.db"));  // refused before anything is stored
  // Under --hosts the guests are not the local image's: their kernels are judged at run.
  ASSERT_EQ(sh("plan " + (d / "c.yaml") + " --hosts " + testfiles::nine_hosts(d / "hosts.yaml")), 0) << read(d / "out.txt");
  EXPECT_THAT(read(d / "out.txt"), HasSubstr("guest kernel: compared with the pilot's cases at `harness run`"));
  write_campaign("cgroups, pressure, guest_kernel");
  ASSERT_EQ(sh("plan " + (d / "c.yaml") + " " + (d / "c.db")), 0) << read(d / "out.txt");
  EXPECT_THAT(read(d / "out.txt"),
              HasSubstr("DECLARED DIFFERENCE from the pilot: cgroups.bg_memory_max_mib: pilot 500, this campaign 300\n"));
}

TEST(PilotMatch, HarnessRunRefusesGuestsOnAnotherKernelThanThePilotsBeforeAnyCase) {
  TempDir d;
  build_pilot_db(d / "pilot.db", kFast);  // its cases ran 6.1.0-57-cloud-amd64
  write_token(d / "token", "tok\n");
  fake::FakeAgent a0(d / "agent0", "tok");
  a0.qualification = fake::passing_qualification(std::string(40, 'c'));  // tests/common/fixed_pin.hpp
  a0.qualification["recorded"]["kernel_release"] = "6.12.9-amd64";
  a0.polls_to_finish = 2;
  testfiles::write(d / "hosts.yaml", "hosts:\n  - name: vm0\n    url: " + a0.url() + "\n    token_file: " + (d / "token") +
                                         "\n    accelerator: kvm\n");
  // confirmatory.yaml on one VM, one triplet per regime (neither is compared with the pilot).
  const auto write_campaign = [&](const std::string& accept) {
    std::string text = confirmatory_text("pilot.db", accept);
    replace_once(text, "  count: 9\n", "  count: 1\n");
    replace_once(text, "  vms: [vm0, vm1, vm2, vm3, vm4, vm5, vm6, vm7, vm8]", "  vms: [vm0]");
    replace_once(text, "  triplets_per_regime: 15 #", "  repeats: 1 #");
    replace_once(text, "poll_interval_ms: 2000", "poll_interval_ms: 20");
    testfiles::write(d / "c.yaml", testfiles::with_fixed_pin(text));
  };
  write_campaign("");
  const auto refused = test_support::run_harness(
      "run " + (d / "c.yaml") + " " + (d / "c.db") + " --hosts " + (d / "hosts.yaml") + " --plain", d / "run.log");
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_THAT(refused.out, HasSubstr("field design.dose_mib.from_pilot: the guests run another kernel than the pilot DB " +
                                     (d / "pilot.db")));
  EXPECT_THAT(refused.out, HasSubstr("\n  vm0: kernel 6.12.9-amd64, the pilot's cases: 6.1.0-57-cloud-amd64\n"));
  EXPECT_TRUE(a0.submissions().empty());
  // Declared: the same guests run the campaign.
  write_campaign(", accept_differences: [guest_kernel]");
  const auto ran = test_support::run_harness(
      "run " + (d / "c.yaml") + " " + (d / "c2.db") + " --hosts " + (d / "hosts.yaml") + " --plain", d / "run2.log");
  EXPECT_EQ(ran.code, 0) << ran.out;
  EXPECT_THAT(ran.out, HasSubstr("run: 12 planned, 12 completed"));
}
