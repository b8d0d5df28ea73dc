// `harness init KIND DIR` (harness/campaign/commands/campaign_copy.hpp), through the built binary and in
// process: --list names every campaigns/*.yaml; the copy is the repository file byte for byte
// and `harness plan` accepts it with the repository plan's hash; an existing copy is never
// overwritten; an unknown KIND is refused with the list; paths relative to campaigns/
// (kernel.image_dir, from_pilot) are rewritten so they resolve from DIR, and the copy plans.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/commands/campaign_copy.hpp"
#include "harness/campaign/plan/schedule.hpp"
#include "tests/common/run_harness.hpp"
#include "tests/unit/campaign/test_files.hpp"

namespace hc = harness::campaign;
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

const std::string kCampaigns = std::string(HARNESS_SOURCE_DIR) + "/campaigns";

test_support::HarnessRun run_cli(const testfiles::TempDir& d, const std::string& args) {
  return test_support::run_harness(args, d / "out.txt", test_support::LogMode::Replace,
                                   "XDG_CACHE_HOME=" + (d / "cache") + " ");
}

/// The plan hash of a campaign file as `harness plan` prints it ("schedule sha256 H").
std::string printed_hash(const std::string& out) {
  const std::string tag = "schedule sha256 ";
  const auto at = out.find(tag);
  return at == std::string::npos ? "" : out.substr(at + tag.size(), 64);
}

}  // namespace

TEST(HarnessInit, ListNamesEveryRepositoryCampaign) {
  testfiles::TempDir d;
  const auto r = run_cli(d, "init --list");
  EXPECT_EQ(r.code, 0) << r.out;
  for (const auto& e : fs::directory_iterator(kCampaigns)) {
    if (e.path().extension() == ".yaml") {
      EXPECT_THAT(r.out, HasSubstr(e.path().stem().string() + " ")) << r.out;
    }
  }
  EXPECT_THAT(r.out, HasSubstr("Smoke: one local VM"));
  // Each summary is the file's whole first sentence (wrapped, never cut mid-sentence) and no line
  // is wider than 100 columns.
  EXPECT_THAT(r.out, HasSubstr("15 matched triplets per\n                   pressure regime = 60 triplets = 180 cases.\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("Each triplet runs")));
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
}

TEST(HarnessInit, CopyPlansWithTheRepositoryHashAndIsNeverOverwritten) {
  testfiles::TempDir d;
  for (const std::string kind : {"smoke", "ci-regression"}) {
    const std::string copy = d / ("mine/" + kind + ".yaml");
    const auto r = run_cli(d, "init " + kind + " " + (d / "mine"));
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr("wrote " + copy));
    EXPECT_THAT(r.out, HasSubstr("Then: harness plan " + copy));
    EXPECT_EQ(testfiles::read(copy), testfiles::read(kCampaigns + "/" + kind + ".yaml"));
    const auto repo = run_cli(d, "plan " + kCampaigns + "/" + kind + ".yaml");
    const auto mine = run_cli(d, "plan " + copy);
    EXPECT_EQ(mine.code, 0) << mine.out;
    EXPECT_EQ(printed_hash(mine.out).size(), 64u) << mine.out;
    EXPECT_EQ(printed_hash(mine.out), printed_hash(repo.out));
  }
  const auto ci = run_cli(d, "init ci-regression " + (d / "other")).out;
  EXPECT_THAT(ci, HasSubstr("design.aa: true declares an A/A run"));
  // A CI campaign is run by `harness check`, and its sensitivity comes from an A/A DB.
  EXPECT_THAT(ci, HasSubstr("harness check " + (d / "other/ci-regression.yaml") + " --junit"));
  EXPECT_THAT(ci, HasSubstr("--variance-from AA.db"));
  testfiles::write(d / "mine/smoke.yaml", "# mine\n");
  const auto again = run_cli(d, "init smoke " + (d / "mine"));
  EXPECT_EQ(again.code, 2) << again.out;
  EXPECT_THAT(again.out, HasSubstr((d / "mine/smoke.yaml") + " exists"));
  EXPECT_EQ(testfiles::read(d / "mine/smoke.yaml"), "# mine\n");
  const auto unknown = run_cli(d, "init no-such " + (d / "mine"));
  EXPECT_EQ(unknown.code, 2) << unknown.out;
  EXPECT_THAT(unknown.out, HasSubstr("'no-such' is not a campaign of"));
  EXPECT_THAT(unknown.out, HasSubstr("confirmatory, confirmatory-5vm"));
}

TEST(HarnessInit, PathsRelativeToCampaignsStillResolveFromTheCopy) {
  testfiles::TempDir d;
  // A campaigns folder whose A/B campaign names an image beside it (../images/head).
  fs::create_directories(d / "repo/camps");
  fs::create_directories(d / "repo/images/head");
  for (const char* f : {"vmlinuz", "initramfs.cpio.gz", "disk-base.img"}) testfiles::write(d / ("repo/images/head/" + std::string(f)), "x");
  testfiles::write(d / "repo/images/head/manifest.json",
                   R"({"kernel_release": "6.9.0-test", "artifacts_sha256": {"vmlinuz": "ab", "canary.db": ""}})");
  std::string text = testfiles::read(kCampaigns + "/ci-regression.yaml");
  const std::string from = "  candidate: {}";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "  candidate: {kernel: {image_dir: ../images/head}}");
  testfiles::write(d / "repo/camps/ab.yaml", text);
  const auto r = run_cli(d, "init ab " + (d / "elsewhere") + " --campaigns " + (d / "repo/camps"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("variants.candidate.kernel.image_dir ../images/head -> " + (d / "repo/images/head")));
  EXPECT_THAT(testfiles::read(d / "elsewhere/ab.yaml"),
              HasSubstr("  candidate: {kernel: {image_dir: " + (d / "repo/images/head") + "}}"));
  const auto plan = run_cli(d, "plan " + (d / "elsewhere/ab.yaml"));
  EXPECT_EQ(plan.code, 0) << plan.out;
  EXPECT_THAT(plan.out, HasSubstr("schedule sha256 "));
  // The file left where it was would not plan from another folder: the rewrite is what resolves.
  testfiles::write(d / "elsewhere/as-is.yaml", text);
  EXPECT_EQ(run_cli(d, "plan " + (d / "elsewhere/as-is.yaml")).code, 2);
}

TEST(HarnessInit, RelocatesFromPilotInEveryScalarFormAndLeavesTheRestByteForByte) {
  const std::string text =
      "# from_pilot: ../out/keep-this-comment.db\n"
      "design:\n  kind: matched-triplets\n  dose_mib: {from_pilot: ../out/pilot/campaign.db}   # the pilot\n";
  std::vector<hc::RelocatedPath> moved;
  const std::string r = hc::relocate_campaign_text(text, "/src/campaigns", "c.yaml", &moved);
  EXPECT_EQ(r, "# from_pilot: ../out/keep-this-comment.db\n"
               "design:\n  kind: matched-triplets\n  dose_mib: {from_pilot: /src/out/pilot/campaign.db}   # the pilot\n");
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].field, "design.dose_mib.from_pilot");
  EXPECT_EQ(moved[0].line, 4);
  const std::string block = "design:\n  dose_mib:\n    from_pilot: \"pilot dbs/p.db\"\n";
  EXPECT_EQ(hc::relocate_campaign_text(block, "/src/campaigns", "c.yaml"),
            "design:\n  dose_mib:\n    from_pilot: \"/src/campaigns/pilot dbs/p.db\"\n");
  const std::string absolute = "design:\n  dose_mib: {from_pilot: /data/p.db}\n";
  EXPECT_EQ(hc::relocate_campaign_text(absolute, "/src/campaigns", "c.yaml"), absolute);
  const std::string folded = "design:\n  dose_mib:\n    from_pilot: >-\n      ../p.db\n";
  try {
    hc::relocate_campaign_text(folded, "/src/campaigns", "c.yaml");
    ADD_FAILURE() << "a folded scalar cannot be rewritten in place";
  } catch (const hc::CampaignError& e) {
    EXPECT_THAT(e.what(), HasSubstr("c.yaml:3:"));
    EXPECT_THAT(e.what(), HasSubstr("field design.dose_mib.from_pilot"));
  }
}
