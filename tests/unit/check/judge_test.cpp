// `harness check FILE --judge DB` through the built binary: a stored A/B DB (analysis/synthetic.hpp
// write_synthetic_ab) judged again with the campaign file's tolerances, no case run. A 1.5x
// candidate on reclaim duration is a regression under max_ratio 1.2 (exit 1, JUnit failure), the
// same DB passes under max_ratio 2.0 (the file's current tolerances decide), and a 1.0x candidate
// passes (exit 0). A DB of another campaign, or one with no completed case, is refused (exit 2);
// a DB argument beside --judge is a usage error (64).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "analysis/synthetic.hpp"
#include "tests/common/run_harness.hpp"
#include "tests/common/slurp.hpp"
#include "tests/common/temp_dir.hpp"

#include <fstream>

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

/// campaigns/ci-regression.yaml reshaped to the synthetic A/B design (2 VMs, 2 regimes, the
/// study's three configurations, 3 pairs each), named `name`, reclaim_duration's tolerance
/// `max_ratio`; written to `path`.
std::string synthetic_campaign(const std::string& path, const std::string& name, const std::string& max_ratio) {
  std::string t = test_support::slurp(std::string(HARNESS_SOURCE_DIR) + "/campaigns/ci-regression.yaml");
  auto rep = [&](const std::string& a, const std::string& b) {
    const auto at = t.find(a);
    EXPECT_NE(at, std::string::npos) << a;
    if (at != std::string::npos) t.replace(at, a.size(), b);
  };
  rep("name: ci-regression", "name: " + name);
  rep("  count: 1\n", "  count: 2\n");
  rep("  - {name: fast-random, rate_mib_s: 64, contents: random}",
      "  - {name: slow-structured, rate_mib_s: 16, contents: structured}\n"
      "  - {name: fast-random, rate_mib_s: 64, contents: random}");
  rep("configurations: [bounded-reclaim]", "configurations: [static-zram, delayed-activation, bounded-reclaim]");
  rep("  repeats: 6 ", "  repeats: 3 ");
  rep("reclaim_duration: {max_ratio: 1.5}", "reclaim_duration: {max_ratio: " + max_ratio + "}");
  std::ofstream(path) << t;
  return path;
}

std::string synthetic_db(const std::string& path, double reclaim_ratio, const std::string& campaign = "synthetic-ab") {
  analysis::SyntheticAbOptions o;
  o.reclaim_ratio = reclaim_ratio;
  o.campaign = campaign;
  analysis::write_synthetic_ab(path, o);
  return path;
}

test_support::HarnessRun check(const test_support::TempDir& d, const std::string& args) {
  return test_support::run_harness("check " + args, d / "out.txt", test_support::LogMode::Replace,
                                   "XDG_CACHE_HOME=" + (d / "cache") + " ");
}

}  // namespace

TEST(CheckJudge, ACandidateOneAndAHalfTimesSlowerIsARegressionUnderTheFilesTolerance) {
  test_support::TempDir d;
  const std::string db = synthetic_db(d / "slow.db", 1.5);
  const std::string strict = synthetic_campaign(d / "strict.yaml", "synthetic-ab", "1.2");
  const auto r = check(d, strict + " --judge " + db + " --junit " + (d / "j.xml") + " --markdown " + (d / "m.md"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--judge: no case runs"));
  EXPECT_THAT(r.out, HasSubstr("REGRESSION reclaim_duration"));
  EXPECT_THAT(r.out, Not(HasSubstr("check database:")));  // nothing planned or run
  EXPECT_THAT(test_support::slurp(d / "j.xml"), HasSubstr("<failure"));
  EXPECT_THAT(test_support::slurp(d / "m.md"), HasSubstr("reclaim_duration"));
  // The same cases judged under a looser tolerance: the file as it is now decides.
  const auto loose = check(d, synthetic_campaign(d / "loose.yaml", "synthetic-ab", "2.0") + " --judge " + db);
  EXPECT_EQ(loose.code, 0) << loose.out;
  EXPECT_THAT(loose.out, Not(HasSubstr("REGRESSION")));
}

TEST(CheckJudge, AnEqualCandidatePasses) {
  test_support::TempDir d;
  const auto r = check(d, synthetic_campaign(d / "strict.yaml", "synthetic-ab", "1.2") + " --judge " +
                              synthetic_db(d / "same.db", 1.0));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("0 of 6 assertion(s) failed, 0 of"));
}

TEST(CheckJudge, RefusesAnotherCampaignsDbAndADbArgument) {
  test_support::TempDir d;
  const std::string file = synthetic_campaign(d / "strict.yaml", "synthetic-ab", "1.2");
  const auto other = check(d, file + " --judge " + synthetic_db(d / "other.db", 1.5, "someone-else"));
  EXPECT_EQ(other.code, 2) << other.out;
  EXPECT_THAT(other.out, HasSubstr("its cases are of campaign someone-else, not of " + file));
  const auto both = check(d, file + " " + (d / "x.db") + " --judge " + (d / "other.db"));
  EXPECT_EQ(both.code, 64) << both.out;
  EXPECT_THAT(both.out, HasSubstr("--judge"));
  const auto missing = check(d, file + " --judge " + (d / "none.db"));
  EXPECT_EQ(missing.code, 2) << missing.out;
}
