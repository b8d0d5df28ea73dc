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

}  // namespace
