// Schema version 6: `harness plan --db` (harness::campaign::store_plan) writes one arms row per
// arm of the plan's cases: the policy and parameters of their specs (the study's bounded-reclaim
// with the design's dose; {} when the cases disagree, as a pilot's doses do), the SHA-256 of the
// arm's canonical JSON, position in the study's order or the campaign's `arms:` order; the
// schedule rows that follow name those arms (schema.sql's triggers let them in).
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/plan/schedule.hpp"
#include "harness/case/control/arm.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/digest/sha256.hpp"
#include "results/db.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace hc = harness::campaign;

namespace {

struct ArmRow {
  std::string name, policy, params_json, sha256;
  std::int64_t position;
  bool operator==(const ArmRow&) const = default;
};
std::ostream& operator<<(std::ostream& o, const ArmRow& a) {
  return o << "{" << a.name << ", " << a.policy << ", " << a.params_json << ", " << a.sha256 << ", " << a.position << "}";
}

/// The row expected for an arm: its canonical JSON written out by hand (keys sorted, no
/// whitespace), hashed with harness/digest.
ArmRow arm(const std::string& name, const std::string& policy, const std::string& params, std::int64_t position) {
  const std::string canonical = "{\"name\":\"" + name + "\",\"params\":" + params + ",\"policy\":\"" + policy + "\"}";
  return {name, policy, params, harness::digest::sha256_hex(canonical), position};
}

/// The arms rows of the DB `path` after storing the plan of the campaign file `yaml`; checks
/// that the schedule was stored with them and, with `parse_specs` (every case's arm agrees and
/// its spec parses: its build pin is resolved), that each arm has the SHA-256 of
/// arm_json of each case's parsed spec (harness/case/control/arm.hpp's definition).
std::vector<ArmRow> stored_arms(const std::string& yaml, const std::string& path, bool parse_specs = true) {
  const hc::Campaign c = hc::load_campaign(yaml);
  const hc::Schedule s = hc::plan(c);
  std::vector<ArmRow> out;
  results::Db db(path, results::Db::Mode::Create);
  hc::store_plan(db, c, s);
  hc::load_verified_plan(db);
  {
    results::Stmt q(db, "SELECT count(*) FROM schedule");
    EXPECT_TRUE(q.step());
    EXPECT_EQ(q.int64(0), static_cast<std::int64_t>(s.cases.size()));
  }
  results::Stmt q(db, "SELECT name, policy, params_json, sha256, position FROM arms ORDER BY position");
  while (q.step()) out.push_back({q.text(0), q.text(1), q.text(2), q.text(3), q.int64(4)});
  if (parse_specs)
    for (const auto& k : s.cases) {
      const auto spec = harness::case_::parse_spec(k.spec.dump(), k.case_id);
      const auto j = harness::case_::arm_json(spec.configuration, spec.policy, spec.policy_params);
      for (const auto& a : out)
        if (a.name == k.configuration) {
          EXPECT_EQ(a.sha256, harness::digest::sha256_hex(j.dump())) << k.case_id;
        }
    }
  // A plan that lists its arms gives each the SHA-256 stored here.
  const auto doc = nlohmann::json::parse(s.json_text);
  if (doc.contains("arms"))
    for (const auto& a : doc.at("arms"))
      for (const auto& row : out)
        if (a.is_object() && a.value("name", "") == row.name && row.params_json != "{}") {
          EXPECT_EQ(a.value("sha256", ""), row.sha256) << row.name;
        }
  // Storing the same plan again changes nothing.
  hc::store_plan(db, c, s);
  results::Stmt n(db, "SELECT count(*) FROM arms");
  EXPECT_TRUE(n.step());
  EXPECT_EQ(n.int64(0), static_cast<std::int64_t>(out.size()));
  return out;
}

std::string source(const std::string& rel) { return std::string(HARNESS_SOURCE_DIR) + "/" + rel; }

}  // namespace

TEST(PlanArms, TheStudysCampaignStoresItsThreeArmsInTheStudysOrder) {
  test_support::TempDir dir("hk-plan-arms");
  EXPECT_EQ(stored_arms(source("campaigns/smoke.yaml"), dir / "smoke.db"),
            (std::vector<ArmRow>{arm("static-zram", "static-zram", "{}", 0),
                                 arm("delayed-activation", "delayed-activation", "{}", 1),
                                 arm("bounded-reclaim", "bounded-reclaim", "{\"dose_mib\":96}", 2)}));
}

TEST(PlanArms, APilotsBoundedReclaimAtSeveralDosesHasNoParameters) {
  test_support::TempDir dir("hk-plan-arms");
  EXPECT_EQ(stored_arms(source("campaigns/pilot.yaml"), dir / "pilot.db", false),
            (std::vector<ArmRow>{arm("bounded-reclaim", "bounded-reclaim", "{}", 0)}));
}

TEST(PlanArms, DeclaredArmsKeepTheCampaignsOrderAndTheirPolicies) {
  test_support::TempDir dir("hk-plan-arms");
  std::ifstream in(source("campaigns/smoke.yaml"));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string yaml = ss.str();
  const std::string from = "configurations: [static-zram, delayed-activation, bounded-reclaim]";
  ASSERT_NE(yaml.find(from), std::string::npos);
  yaml.replace(yaml.find(from), from.size(),
               "arms:\n  - bounded-reclaim\n  - {name: reclaim-32, policy: bounded-reclaim, params: {dose_mib: 32}}\n"
               "  - static-zram\n  - delayed-activation");
  const std::string kind = "kind: matched-triplets";
  ASSERT_NE(yaml.find(kind), std::string::npos);
  yaml.replace(yaml.find(kind), kind.size(), "kind: matched-blocks");
  const std::string path = dir / "smoke.yaml";
  std::ofstream(path) << yaml;
  EXPECT_EQ(stored_arms(path, dir / "declared.db"),
            (std::vector<ArmRow>{arm("bounded-reclaim", "bounded-reclaim", "{\"dose_mib\":96}", 0),
                                 arm("reclaim-32", "bounded-reclaim", "{\"dose_mib\":32}", 1),
                                 arm("static-zram", "static-zram", "{}", 2),
                                 arm("delayed-activation", "delayed-activation", "{}", 3)}));
}
