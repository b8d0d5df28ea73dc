// Pinned plan hashes (issue 18): the SHA-256 of the planned schedule of each repository
// campaign is the preregistration. If this test fails, something that must not change
// between machines changed (tests/README.md, "What must not change between machines"):
// the campaign file, a default of the loader, the case spec, nlohmann-json's dump format,
// Boost.Random's sequences or the case-id format. Do not update the hashes to make it
// pass: find out what changed, and update them only for a deliberate change of a campaign
// or of the spec, saying so in the commit (earlier plans then no longer resume).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "harness/campaign/campaign.hpp"
#include "harness/campaign/schedule.hpp"

namespace hc = harness::campaign;

namespace {

/// The plan hash of campaigns/<name>; `pinned_commit: build` is replaced by a fixed commit,
/// as `harness plan` would replace it by the planning build's own.
std::string plan_hash(const std::string& name) {
  std::ifstream in(std::string(HARNESS_SOURCE_DIR) + "/campaigns/" + name);
  std::ostringstream os;
  os << in.rdbuf();
  auto c = hc::parse_campaign(os.str(), name);
  hc::resolve_build_pin(c, std::string(40, 'c'), false);
  return hc::plan(c).sha256_hex;
}

}  // namespace

TEST(PinnedPlans, SmokeCampaign) { EXPECT_EQ(plan_hash("smoke.yaml"), "c2280f6e800ceeabdca391372233a9993bdc7be3cadf3b0ec796fce634b71c50"); }
TEST(PinnedPlans, CiRegressionCampaign) { EXPECT_EQ(plan_hash("ci-regression.yaml"), "955b02cdfd11f60cef58d47eaa0f706dd5bb406dc07cb71b74711c4ff531c068"); }
TEST(PinnedPlans, PilotCampaign) { EXPECT_EQ(plan_hash("pilot.yaml"), "62bb966eed3c035dbc486e0340ed6cd9a8280e2ecb6c0f3acc8003e827ec8191"); }
TEST(PinnedPlans, ConfirmatoryCampaignStudyDesign) { EXPECT_EQ(plan_hash("confirmatory.yaml"), "534f9fa5eedb35aa0bee0e88b3505a60c0518c04becb571d4a71ac7a6515f218"); }
TEST(PinnedPlans, ConfirmatoryFiveVmAlternative) { EXPECT_EQ(plan_hash("confirmatory-5vm.yaml"), "fb579653d502fc641ab5e8aaf831e1a4fe873bf7381a8439fc8b28c759e02c0e"); }
