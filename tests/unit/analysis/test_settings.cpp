// Preregistered analysis settings read from campaign_meta.campaign_yaml.
#include "analysis/data/campaign_settings.hpp"

#include <gtest/gtest.h>

TEST(CampaignSettings, ReadsAnalysisAndEligibilitySections) {
  const std::map<std::string, std::string> meta{
      {"campaign_yaml",
       "name: x\nseed: 7\nanalysis:\n  bootstrap_replicates: 2000\n  alpha: 0.1\neligibility:\n  max_duration_s: 2\n"
       "  min_achieved_ratio: 0.75\n"}};
  const auto s = analysis::read_campaign_settings(meta);
  EXPECT_EQ(s.bootstrap_replicates, 2000);
  EXPECT_DOUBLE_EQ(*s.alpha, 0.1);
  EXPECT_DOUBLE_EQ(*s.max_duration_s, 2.0);
  EXPECT_DOUBLE_EQ(*s.min_achieved_ratio, 0.75);
  EXPECT_TRUE(s.warnings.empty());
}

TEST(CampaignSettings, BadValuesWarnWithLineAndKeepDefaults) {
  const std::map<std::string, std::string> meta{
      {"campaign_yaml", "name: x\nanalysis:\n  bootstrap_replicates: lots\n  alpha: 0.9\n"}};
  const auto s = analysis::read_campaign_settings(meta);
  EXPECT_FALSE(s.bootstrap_replicates);
  EXPECT_FALSE(s.alpha);
  ASSERT_EQ(s.warnings.size(), 2u);
  EXPECT_NE(s.warnings[0].find("line 3: analysis.bootstrap_replicates is not a number"), std::string::npos) << s.warnings[0];
  EXPECT_NE(s.warnings[1].find("line 4: analysis.alpha = 0.9 outside"), std::string::npos) << s.warnings[1];
  EXPECT_TRUE(analysis::read_campaign_settings({}).warnings.empty());
  EXPECT_EQ(analysis::read_campaign_settings({{"campaign_yaml", "a: [unclosed"}}).warnings.size(), 1u);
}

// The stored YAML goes through the strict reader (harness/yaml/strict_yaml.hpp): a key given
// twice is named with both places, where yaml-cpp alone would keep the first silently.
TEST(CampaignSettings, StoredYamlWithADuplicateKeyIsNamedNotReadHalfway) {
  const auto s = analysis::read_campaign_settings(
      {{"campaign_yaml", "name: x\nanalysis:\n  alpha: 0.1\n  alpha: 0.2\n"}});
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("campaign_meta.campaign_yaml:4:3: field analysis.alpha: duplicate key (first given at "
                               "campaign_meta.campaign_yaml:3:3)"),
            std::string::npos)
      << s.warnings[0];
  EXPECT_NE(s.warnings[0].find("using the study defaults"), std::string::npos) << s.warnings[0];
}

// The pilot rule's reading (analysis/data/pilot_reading.hpp): read by name, an unknown name warns
// with its line and keeps the default, an absent key stays unset.
TEST(CampaignSettings, ReadsThePilotReading) {
  const auto s = analysis::read_campaign_settings(
      {{"campaign_yaml", "name: x\neligibility:\n  restoration: case-teardown\n  eagain: partial-reclaim\n"}});
  ASSERT_TRUE(s.restoration && s.eagain);
  EXPECT_EQ(*s.restoration, analysis::PilotReading::Restoration::CaseTeardown);
  EXPECT_EQ(*s.eagain, analysis::PilotReading::Eagain::PartialReclaim);
  EXPECT_TRUE(s.warnings.empty());
  const auto none = analysis::read_campaign_settings({{"campaign_yaml", "name: x\neligibility:\n  max_duration_s: 1\n"}});
  EXPECT_FALSE(none.restoration);
  EXPECT_FALSE(none.eagain);
  const auto bad = analysis::read_campaign_settings({{"campaign_yaml", "name: x\neligibility:\n  eagain: ignore\n"}});
  EXPECT_FALSE(bad.eagain);
  ASSERT_EQ(bad.warnings.size(), 1u);
  EXPECT_EQ(bad.warnings[0],
            "campaign YAML line 3: eligibility.eagain is not one of interface-error, partial-reclaim; using the default");
}
