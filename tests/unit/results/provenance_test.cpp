// results/provenance: the provenance read from a campaign DB.
#include "results/db.hpp"
#include "results/provenance.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace {

TEST(Provenance, ReadsCampaignMetaAndCases) {
  const auto path = std::filesystem::temp_directory_path() / ("prov-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  {
    results::Db db(path.string(), results::Db::Mode::Create);
    results::Stmt m(db, "INSERT INTO campaign_meta(key, value) VALUES (?1, ?2)");
    m.bind(1, "name").bind(2, "smoke").run();
    m.bind(1, "kind").bind(2, "smoke").run();
    m.bind(1, "schedule_sha256").bind(2, std::string(64, 'a')).run();
    m.bind(1, "campaign_sha256").bind(2, std::string(64, 'd')).run();
    results::Stmt c(db,
                    "INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, "
                    "accelerator, kernel_release, source_commit, source_dirty, spec_json) VALUES "
                    "(?1, 'smoke', 'vm0', 'r', 0, 'static-zram', 'completed', ?2, '6.1.0-57-cloud-amd64', ?3, ?4, '{}')");
    c.bind(1, "a").bind(2, "tcg").bind(3, std::string(40, 'b')).bind(4, 0).run();
    c.bind(1, "b").bind(2, "kvm").bind(3, std::string(40, 'b')).bind(4, 1).run();
  }
  results::Db db(path.string(), results::Db::Mode::ReadOnly);
  const auto p = results::collect_provenance(db, {"1.2.3", std::string(40, 'c'), true}, "harness analyze x.db");
  EXPECT_EQ(p.campaign_name, "smoke");
  EXPECT_EQ(p.campaign_kind, "smoke");
  EXPECT_EQ(p.plan_sha256, std::string(64, 'a'));
  EXPECT_EQ(p.accelerators, (std::vector<std::string>{"kvm", "tcg"}));
  EXPECT_EQ(p.kernels, (std::vector<std::string>{"6.1.0-57-cloud-amd64"}));
  EXPECT_EQ(p.case_commits, (std::vector<std::string>{std::string(40, 'b'), std::string(40, 'b') + "-dirty"}));
  EXPECT_EQ(p.generated_utc.size(), 20u);

  const auto j = nlohmann::json::parse(results::provenance_json(p));
  EXPECT_EQ(j.at("harness_version"), "1.2.3");
  EXPECT_EQ(j.at("source_dirty"), true);
  EXPECT_EQ(j.at("command_line"), "harness analyze x.db");
  EXPECT_NE(results::provenance_markdown(p).find("(dirty"), std::string::npos);

  const auto csv = std::filesystem::temp_directory_path() / ("prov-" + std::to_string(::getpid()) + ".csv");
  results::write_sidecar(csv.string(), p);
  std::ifstream in(csv.string() + ".meta.json");
  const auto side = nlohmann::json::parse(in);
  EXPECT_EQ(side.at("artifact"), csv.filename().string());
  EXPECT_EQ(side.at("plan_sha256"), std::string(64, 'a'));
  EXPECT_EQ(side.at("campaign_sha256"), std::string(64, 'd'));
  std::filesystem::remove(csv.string() + ".meta.json");
  std::filesystem::remove(path);
}

// Issue 59: a DB of the synthetic generator is told apart, by its campaign_meta mark or, in a
// DB written before the mark, by a case's source_commit "synthetic"; its provenance says no case ran.
TEST(Provenance, TellsASyntheticDbApart) {
  const auto path = std::filesystem::temp_directory_path() / ("prov-syn-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  results::Db db(path.string(), results::Db::Mode::Create);
  results::Stmt c(db,
                  "INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, accelerator, "
                  "kernel_release, source_commit, spec_json) VALUES (?1, 's', 'vm0', 'r', 0, 'static-zram', "
                  "'completed', 'kvm', '6.1.0-57-cloud-amd64', ?2, '{}')");
  c.bind(1, "a").bind(2, std::string(40, 'b')).run();
  EXPECT_FALSE(results::is_synthetic_db(db));
  EXPECT_FALSE(results::collect_provenance(db, {"1", "x", false}, "cmd").synthetic);
  results::Stmt(db, "INSERT INTO campaign_meta(key, value) VALUES ('synthetic', 'analysis/simulate/synthetic.cpp')").run();
  EXPECT_TRUE(results::is_synthetic_db(db));
  results::Stmt(db, "DELETE FROM campaign_meta").run();
  c.bind(1, "b").bind(2, "synthetic").run();  // an older synthetic DB: no mark, the generator's commit
  const auto p = results::collect_provenance(db, {"1", "x", false}, "cmd");
  EXPECT_TRUE(p.synthetic);
  EXPECT_EQ(nlohmann::json::parse(results::provenance_json(p)).at("synthetic"), true);
  EXPECT_NE(results::provenance_markdown(p).find("- Cases: none ran (a synthetic DB)"), std::string::npos);
  EXPECT_EQ(results::provenance_markdown(p).find("Cases ran on"), std::string::npos);
  std::filesystem::remove(path);
}

}  // namespace
