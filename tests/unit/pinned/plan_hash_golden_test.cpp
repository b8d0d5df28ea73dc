// Pinned plan hashes: the SHA-256 of the planned schedule of each repository
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

#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/plan/schedule.hpp"

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

TEST(PinnedPlans, SmokeCampaign) { EXPECT_EQ(plan_hash("smoke.yaml"), "37988d0a401f4fea09e62daed9a4596b2624d5b21d4a7b2b1a0e909f311718a3"); }
TEST(PinnedPlans, CiRegressionCampaign) { EXPECT_EQ(plan_hash("ci-regression.yaml"), "a7971012310e4ff9d9fde1d3b0c6ab47baeeafb614a16cffc188661647c2d8d3"); }
TEST(PinnedPlans, PilotCampaign) { EXPECT_EQ(plan_hash("pilot.yaml"), "38d918f16ad3922ea1c0099a3f90d439be957be9ae63e34b9d06ff76bc82a1b0"); }
TEST(PinnedPlans, ConfirmatoryCampaignStudyDesign) { EXPECT_EQ(plan_hash("confirmatory.yaml"), "3bb8b4165c4a27e339d59783ada6c764980444efc88b3f9448cf392dd33a0156"); }
TEST(PinnedPlans, ConfirmatoryFiveVmAlternative) { EXPECT_EQ(plan_hash("confirmatory-5vm.yaml"), "216af3d5d179cec0e86c9c399f2926d6105054fe5f6bcf678b4ae298fbfa78f8"); }
TEST(PinnedPlans, CalibrationCampaign) { EXPECT_EQ(plan_hash("calibration.yaml"), "d1d94b731eb9dffe604fb25d033f77584d294cca6db0faf4854613ceb216a653"); }
