// Every case spec that `harness plan` writes for a repository campaign is valid and is
// exactly what the one spec writer (harness/case/spec/spec_writer.hpp) writes for it: parsing it
// and writing it again changes nothing. The guest tests' campaigns (tests/vm/campaign/) too.
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/plan/schedule.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/case/spec/spec_writer.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace hc = harness::campaign;

TEST(PlannedSpecs, EveryRepositoryCampaignsSpecsParseAndWriteBackUnchanged) {
  int campaigns = 0;
  // campaigns/ and the guest tests' campaigns: every arm passes its policy's settings checks
  // (harness/case/control/policy.hpp settings_check) and every planned spec parses.
  std::vector<std::filesystem::path> files;
  for (const char* dir : {"/campaigns", "/tests/vm/campaign"})
    for (const auto& e : std::filesystem::directory_iterator(std::string(HARNESS_SOURCE_DIR) + dir))
      if (e.path().extension() == ".yaml") files.push_back(e.path());
  for (const auto& path : files) {
    const std::filesystem::directory_entry e(path);
    SCOPED_TRACE(e.path().filename().string());
    auto c = hc::load_campaign(e.path().string());
    hc::resolve_build_pin(c, std::string(40, 'c'), false);
    const auto s = hc::plan(c);
    ASSERT_FALSE(s.cases.empty());
    for (const auto& k : s.cases) {
      const auto parsed = harness::case_::parse_spec(k.spec.dump(), k.case_id);
      EXPECT_EQ(harness::case_::spec_json(parsed), k.spec) << k.case_id;
      EXPECT_EQ(parsed.case_id, k.case_id);
      EXPECT_EQ(parsed.configuration, k.configuration);
    }
    ++campaigns;
  }
  EXPECT_GE(campaigns, 12);
}

TEST(PlannedSpecs, PlannedSpecsStateTheActiveWindowSlide) {
  auto c = hc::load_campaign(std::string(HARNESS_SOURCE_DIR) + "/campaigns/confirmatory.yaml");
  hc::resolve_build_pin(c, std::string(40, 'c'), false);
  const auto s = hc::plan(c);
  for (const auto& k : s.cases)
    ASSERT_DOUBLE_EQ(k.spec.at("pressure").at("active_set_slide_mib_s").get<double>(),
                     harness::case_::kDefaultActiveSetSlideMibS);
}
