// design.dose_mib {from_pilot: PATH}: the dose comes from the pilot rule over a pilot DB at
// plan time, and the pilot DB's SHA-256 is part of the preregistered plan.
#include "analysis/analysis_report.hpp"
#include "harness/campaign/campaign.hpp"
#include "harness/campaign/campaign_db.hpp"
#include "harness/campaign/pilot_dose.hpp"
#include "harness/campaign/schedule.hpp"
#include "harness/digest/sha256.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <cstdlib>
#include <functional>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include "test_files.hpp"

namespace hc = harness::campaign;
using testfiles::TempDir;
using testfiles::read;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

constexpr std::int64_t kMiB = 1 << 20;

/// A pilot DB as `harness run campaigns/pilot.yaml` leaves it: the plan (4 doses x 4
/// regimes) and one completed case per row, every criterion of the rule met, each write
/// taking `seconds(dose_mib, regime)`.
void build_pilot_db(const std::string& path, const std::function<double(std::int64_t, const std::string&)>& seconds) {
  const auto c = hc::load_campaign(std::string(HARNESS_SOURCE_DIR) + "/campaigns/pilot.yaml");
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

/// confirmatory.yaml with its dose taken from `pilot_db`.
hc::Campaign confirmatory_from(const std::string& pilot_db) {
  std::string text = read(std::string(HARNESS_SOURCE_DIR) + "/campaigns/confirmatory.yaml");
  const auto p = text.find("  dose_mib: 96\n");
  EXPECT_NE(p, std::string::npos);
  text.replace(p, std::string("  dose_mib: 96\n").size(), "  dose_mib: {from_pilot: " + pilot_db + "}\n");
  return hc::parse_campaign(text, "confirmatory-from-pilot.yaml");
}

}  // namespace

TEST(PilotDose, ResolvesTheLargestEligibleDoseAndHashesThePilotDb) {
  TempDir d;
  build_pilot_db(d / "pilot.db", [](std::int64_t, const std::string&) { return 0.2; });
  const auto r = hc::resolve_pilot_dose(d / "pilot.db", {1.0, 0.8});
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
  EXPECT_THROW(hc::resolve_pilot_dose(d / "missing.db", {1.0, 0.8}), hc::PilotDoseError);
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
  ASSERT_EQ(std::system((exe + " plan " + (d / "c.yaml") + " --hosts " + testfiles::nine_hosts(d / "hosts.yaml") +
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
    const int rc = std::system((exe + " " + args + " > " + (d / "out.txt") + " 2>&1").c_str());
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
