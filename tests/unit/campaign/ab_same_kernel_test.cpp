// The same-kernel rule of A/B campaigns (harness/campaign/check/ab_same_kernel.hpp): two image
// directories whose manifests record the same kernel hash are refused, naming both directories
// and the hash, in process and by `harness plan` (exit 2, nothing stored); with design.aa: true
// they plan, and the declaration leaves the plan's hash unchanged. The default image on both
// sides is refused only when the knobs are the same too (a knob comparison is not A/A).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "harness/campaign/check/ab_same_kernel.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/plan/schedule.hpp"
#include "tests/common/problem_text.hpp"
#include "tests/common/run_harness.hpp"
#include "tests/unit/campaign/test_files.hpp"

namespace hc = harness::campaign;
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

/// check_variant_kernels' refusal, "" when it passes.
std::string same_kernel_refusal(const hc::Campaign& c, const std::string& default_image_dir) {
  return test_support::problem_text(hc::check_variant_kernels(c, default_image_dir));
}

/// A fake image in `dir`: the files a boot reads and a manifest whose kernel hash is `vmlinuz_sha256`.
void fake_image(const std::string& dir, const std::string& vmlinuz_sha256) {
  fs::create_directories(dir);
  for (const char* f : {"vmlinuz", "initramfs.cpio.gz", "disk-base.img"}) testfiles::write(dir + "/" + f, "x");
  testfiles::write(dir + "/manifest.json",
                   R"({"sha256": "image-)" + vmlinuz_sha256 + R"(", "kernel_release": "6.9.0-test", )"
                   R"("artifacts_sha256": {"vmlinuz": ")" + vmlinuz_sha256 + R"(", "canary.db": ""}})" "\n");
}

/// campaigns/ci-regression.yaml (pinned_commit any, local-qemu) with its variants block replaced
/// by `variants` and design.aa kept only when `aa`; written to `path`.
std::string ci_campaign(const std::string& path, const std::string& variants, bool aa) {
  std::string text = testfiles::read(std::string(HARNESS_SOURCE_DIR) + "/campaigns/ci-regression.yaml");
  const std::string block = "variants:\n  baseline: {}\n  candidate: {}\n", decl = "  aa: true\n";
  EXPECT_NE(text.find(block), std::string::npos);
  EXPECT_NE(text.find(decl), std::string::npos);
  text.replace(text.find(block), block.size(), variants);
  if (!aa) text.erase(text.find(decl), decl.size());
  testfiles::write(path, text);
  return path;
}

const std::string kTwoImages =
    "variants:\n  baseline: {kernel: {image_dir: images/base}}\n  candidate: {kernel: {image_dir: images/head}}\n";
const std::string kHash(64, 'a');

}  // namespace

TEST(SameKernel, TwoImageDirsWithTheSameKernelHashAreRefusedNamingBothAndTheHash) {
  testfiles::TempDir d;
  fake_image(d / "images/base", kHash);
  fake_image(d / "images/head", kHash);
  const auto c = hc::load_campaign(ci_campaign(d / "ci.yaml", kTwoImages, false));
  const std::string why = same_kernel_refusal(c, d / "cache/image");
  EXPECT_THAT(why, HasSubstr(d / "ci.yaml"));
  EXPECT_THAT(why, HasSubstr("field variants.candidate"));
  EXPECT_THAT(why, HasSubstr("vmlinuz sha256 " + kHash));
  EXPECT_THAT(why, HasSubstr("baseline image:  " + (d / "images/base")));
  EXPECT_THAT(why, HasSubstr("candidate image: " + (d / "images/head")));
  EXPECT_THAT(why, HasSubstr("design.aa: true"));
  // Another kernel on one side: a kernel comparison, accepted.
  fake_image(d / "images/head", std::string(64, 'b'));
  EXPECT_EQ(same_kernel_refusal(c, d / "cache/image"), "");
}

TEST(SameKernel, TheSameKernelWithDifferentKnobsIsRefusedWhenAnImageIsNamed) {
  testfiles::TempDir d;
  fake_image(d / "images/base", kHash);
  fake_image(d / "images/head", kHash);
  const auto c = hc::load_campaign(ci_campaign(
      d / "ci.yaml",
      "variants:\n  baseline: {kernel: {image_dir: images/base}}\n"
      "  candidate: {kernel: {image_dir: images/head}, sysctls: {vm.swappiness: 100}}\n",
      false));
  const std::string why = same_kernel_refusal(c, d / "cache/image");
  EXPECT_THAT(why, HasSubstr("measure one kernel against itself"));
  EXPECT_THAT(why, Not(HasSubstr("write the same knobs")));
}

TEST(SameKernel, DefaultImageOnBothSidesIsRefusedOnlyWhenNothingDiffers) {
  testfiles::TempDir d;
  // The default image not built yet: both sides are still that one directory.
  auto aa = hc::load_campaign(ci_campaign(d / "aa.yaml", "variants:\n  baseline: {}\n  candidate: {}\n", false));
  const std::string why = same_kernel_refusal(aa, d / "cache/image");
  EXPECT_THAT(why, HasSubstr("this is an A/A run"));
  EXPECT_THAT(why, HasSubstr("vmlinuz sha256 unknown: the image is not built yet"));
  EXPECT_THAT(why, HasSubstr((d / "cache/image") + " (the default image) (not built yet)"));
  const auto knobs = hc::load_campaign(ci_campaign(
      d / "knobs.yaml", "variants:\n  baseline: {}\n  candidate: {sysctls: {vm.swappiness: 100}}\n", false));
  EXPECT_EQ(same_kernel_refusal(knobs, d / "cache/image"), "");
  const auto cmdline = hc::load_campaign(ci_campaign(
      d / "cmdline.yaml", "variants:\n  baseline: {}\n  candidate: {cmdline: [transparent_hugepage=never]}\n", false));
  EXPECT_EQ(same_kernel_refusal(cmdline, d / "cache/image"), "");
  // An image named on one side that holds the default image's kernel.
  fake_image(d / "cache/image", kHash);
  fake_image(d / "images/head", kHash);
  const auto one = hc::load_campaign(
      ci_campaign(d / "one.yaml", "variants:\n  baseline: {}\n  candidate: {kernel: {image_dir: images/head}}\n", false));
  EXPECT_THAT(same_kernel_refusal(one, d / "cache/image"), HasSubstr("vmlinuz sha256 " + kHash));
}

TEST(SameKernel, DeclaredAaPlansWithTheSameHash) {
  testfiles::TempDir d;
  const auto with = hc::load_campaign(ci_campaign(d / "with.yaml", "variants:\n  baseline: {}\n  candidate: {}\n", true));
  const auto without =
      hc::load_campaign(ci_campaign(d / "without.yaml", "variants:\n  baseline: {}\n  candidate: {}\n", false));
  EXPECT_TRUE(with.design_aa);
  EXPECT_FALSE(without.design_aa);
  EXPECT_EQ(same_kernel_refusal(with, d / "cache/image"), "");
  EXPECT_EQ(hc::plan(with).sha256_hex, hc::plan(without).sha256_hex);
}

TEST(SameKernel, HarnessPlanRefusesAndStoresNothingUnlessDeclared) {
  testfiles::TempDir d;
  fake_image(d / "images/base", kHash);
  fake_image(d / "images/head", kHash);
  const std::string env = "XDG_CACHE_HOME=" + (d / "cache") + " ";
  const auto refused = test_support::run_harness(
      "plan " + ci_campaign(d / "ci.yaml", kTwoImages, false) + " " + (d / "ci.db"), d / "out.txt",
      test_support::LogMode::Replace, env);
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_THAT(refused.out, HasSubstr("harness plan: " + (d / "ci.yaml")));
  EXPECT_THAT(refused.out, HasSubstr(kHash));
  EXPECT_THAT(refused.out, HasSubstr(d / "images/base"));
  EXPECT_THAT(refused.out, HasSubstr(d / "images/head"));
  EXPECT_FALSE(fs::exists(d / "ci.db"));
  const auto checked = test_support::run_harness("check " + (d / "ci.yaml") + " " + (d / "check.db"), d / "out.txt",
                                                 test_support::LogMode::Replace, env);
  EXPECT_EQ(checked.code, 2) << checked.out;
  EXPECT_THAT(checked.out, HasSubstr("harness check: " + (d / "ci.yaml")));
  EXPECT_FALSE(fs::exists(d / "check.db"));
  const auto planned = test_support::run_harness("plan " + ci_campaign(d / "aa.yaml", kTwoImages, true),
                                                 d / "out.txt", test_support::LogMode::Replace, env);
  EXPECT_EQ(planned.code, 0) << planned.out;
  EXPECT_THAT(planned.out, HasSubstr("schedule sha256 "));
}
