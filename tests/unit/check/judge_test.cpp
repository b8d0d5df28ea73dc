// `harness check FILE --judge DB` through the built binary: a stored A/B DB (analysis/synthetic.hpp
// write_synthetic_ab) judged again with the campaign file's tolerances, no case run. A 1.5x
// candidate on reclaim duration is a regression under max_ratio 1.2 (exit 1, JUnit failure), the
// same DB passes under max_ratio 2.0 (the file's current tolerances decide), and a 1.0x candidate
// passes (exit 0). A DB of another campaign, of another design (its stored plan differs from the
// file beyond tolerances and assertions), with no plan, or missing is refused (exit 2); a DB
// argument beside --judge is a usage error (64). A ratio past its tolerance whose interval
// decides nothing exits 5 (inconclusive); --until-decided --max-pairs judges with alpha split
// over its looks and the decided verdicts; `harness plan --variance-from DB` prints the
// smallest detectable ratio and refuses an insensitive kind: ci design unless
// regression.accept_insensitive is set.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/common/run_harness.hpp"
#include "tests/common/slurp.hpp"
#include "tests/common/synthetic_ab_campaign.hpp"
#include "tests/common/temp_dir.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

/// The reshaped campaign (tests/common/synthetic_ab_campaign.hpp) named `name` at `path`.
std::string synthetic_campaign(const std::string& path, const std::string& name, const std::string& max_ratio) {
  return test_support::write_synthetic_ab_campaign(path, name, max_ratio);
}

/// A synthetic A/B DB whose stored plan is the campaign "synthetic-ab" (max_ratio 1.2): the
/// design every file below has, whatever its tolerance.
std::string synthetic_db(const std::string& path, double reclaim_ratio, const std::string& campaign = "synthetic-ab") {
  return test_support::write_synthetic_ab_db(path, reclaim_ratio, campaign,
                                             test_support::synthetic_ab_campaign_text(campaign, "1.2"));
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

TEST(CheckJudge, RefusesADbOfAnotherDesignNamingBothValuesAndOneWithoutAPlan) {
  test_support::TempDir d;
  const std::string db = synthetic_db(d / "ab.db", 1.0);
  // Same name, other design: 2 pairs per stratum instead of 3, the candidate sets a sysctl.
  std::string text = test_support::synthetic_ab_campaign_text("synthetic-ab", "1.2");
  text.replace(text.find("  repeats: 3 "), 13, "  repeats: 2 ");
  text.replace(text.find("  candidate: {}"), 15, "  candidate: {sysctls: {vm.swappiness: 100}}");
  text.replace(text.find("  aa: true\n"), 11, "");
  const std::string file = d / "other.yaml";
  std::ofstream(file) << text;
  const auto r = check(d, file + " --judge " + db);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("its plan is of another design than " + file));
  EXPECT_THAT(r.out, HasSubstr("design.repeats: 2 vs 3"));
  EXPECT_THAT(r.out, HasSubstr("variants.candidate: sysctl vm.swappiness=100 vs nothing set (the guest as booted)"));
  EXPECT_THAT(r.out, Not(HasSubstr("judging ")));
  // A DB whose plan is no campaign (the generator's placeholder): its design cannot be told.
  const auto bare = check(d, synthetic_campaign(d / "strict.yaml", "synthetic-ab", "1.2") + " --judge " +
                                 test_support::write_synthetic_ab_db(d / "bare.db", 1.0));
  EXPECT_EQ(bare.code, 2) << bare.out;
  EXPECT_THAT(bare.out, HasSubstr("cannot tell whether it ran"));
}

// Issue 47: inconclusive is an exit code of its own (5), the sequential judgement, and what
// `harness plan --variance-from DB` says about the smallest detectable change.

TEST(CheckJudge, ARatioPastTheToleranceWithAnUndecidedIntervalExitsFive) {
  test_support::TempDir d;
  const std::string db = synthetic_db(d / "near.db", 1.25);
  const auto r = check(d, synthetic_campaign(d / "strict.yaml", "synthetic-ab", "1.2") + " --judge " + db +
                              " --markdown " + (d / "m.md"));
  EXPECT_EQ(r.code, 5) << r.out;
  EXPECT_THAT(r.out, HasSubstr("INCONCLUSIVE reclaim_duration"));
  EXPECT_THAT(r.out, HasSubstr("0 of 10 metric(s) regressed, 1 inconclusive"));
  EXPECT_THAT(test_support::slurp(d / "m.md"), HasSubstr("**INCONCLUSIVE**"));
}

TEST(CheckJudge, UntilDecidedJudgesWithTheSplitLevelAndDecidedVerdicts) {
  test_support::TempDir d;
  const std::string strict = synthetic_campaign(d / "strict.yaml", "synthetic-ab", "1.2");
  // The synthetic design: 2 vms x 2 regimes x 3 configurations = 12 pairs per repeat, 3 repeats;
  // a cap of 72 pairs = 6 repeats, looks at 3 and 6 repeats (K = 2): intervals at 1 - 0.05/(10 x 2).
  const auto slow = check(d, strict + " --judge " + synthetic_db(d / "slow.db", 1.5) + " --until-decided --max-pairs 72");
  EXPECT_EQ(slow.code, 1) << slow.out;
  EXPECT_THAT(slow.out, HasSubstr("judged after 2 look(s) at 36, 72 pairs; each interval at 99.75%"));
  EXPECT_THAT(slow.out, HasSubstr("REGRESSION reclaim_duration"));
  EXPECT_THAT(slow.out, HasSubstr("delta-method t"));
  const auto same = check(d, strict + " --judge " + synthetic_db(d / "same.db", 1.0) + " --until-decided --max-pairs 72");
  EXPECT_EQ(same.code, 0) << same.out;
  EXPECT_THAT(same.out, HasSubstr("ok-decided"));
  EXPECT_THAT(same.out, Not(HasSubstr("rounded down")));
  // A cap that is not whole repeats is rounded down, and says so.
  const auto odd = check(d, strict + " --judge " + (d / "same.db") + " --until-decided --max-pairs 80");
  EXPECT_THAT(odd.out, HasSubstr("at most 72 pair(s)"));
  EXPECT_THAT(odd.out, HasSubstr("(--max-pairs 80 rounded down to 72: whole repeats of 12 pair(s)"));
  // A tolerance the pairs cannot decide yet: inconclusive, exit 5.
  const auto tight = check(d, synthetic_campaign(d / "tight.yaml", "synthetic-ab", "1.01") + " --judge " +
                                  (d / "same.db") + " --until-decided --max-pairs 72");
  EXPECT_EQ(tight.code, 5) << tight.out;
  EXPECT_THAT(tight.out, HasSubstr("INCONCLUSIVE reclaim_duration"));
}

TEST(CheckJudge, UntilDecidedNeedsMaxPairsAndRunsBothVariants) {
  test_support::TempDir d;
  const std::string file = synthetic_campaign(d / "strict.yaml", "synthetic-ab", "1.2");
  const std::string db = synthetic_db(d / "same.db", 1.0);
  EXPECT_EQ(check(d, file + " --judge " + db + " --until-decided").code, 64);
  EXPECT_EQ(check(d, file + " --judge " + db + " --max-pairs 72").code, 64);
  EXPECT_EQ(check(d, file + " --judge " + db + " --until-decided --max-pairs 72 --baseline-db " + db).code, 64);
  const auto below = check(d, file + " --judge " + db + " --until-decided --max-pairs 24");
  EXPECT_EQ(below.code, 2) << below.out;
  EXPECT_THAT(below.out, HasSubstr("--max-pairs 24 is below the 36 pairs of field design.repeats"));
}

namespace {

/// The synthetic campaign with reclaim_duration's tolerance `max_ratio`, planned without
/// booting (overcommit: its two guests exceed this machine's cores) and, when `accept`, the
/// override regression.accept_insensitive: true.
std::string plannable(const test_support::TempDir& d, const std::string& name, const std::string& max_ratio, bool accept) {
  std::string t = test_support::synthetic_ab_campaign_text("synthetic-ab", max_ratio);
  t.replace(t.find("  kind: local-qemu\n"), 18, "  kind: local-qemu\n  overcommit: true\n");
  if (accept) t.replace(t.find("  alpha: 0.05\n"), 14, "  alpha: 0.05\n  accept_insensitive: true\n");
  const std::string path = d / name;
  std::ofstream(path) << t;
  return path;
}

test_support::HarnessRun plan(const test_support::TempDir& d, const std::string& args) {
  return test_support::run_harness("plan " + args, d / "out.txt", test_support::LogMode::Replace,
                                   "XDG_CACHE_HOME=" + (d / "cache") + " ");
}

}  // namespace

TEST(PlanSensitivity, SaysItCannotKnowWithoutADbAndPrintsTheSmallestDetectableRatioWithOne) {
  test_support::TempDir d;
  const std::string file = plannable(d, "c.yaml", "1.2", false);
  const auto blind = plan(d, file);
  EXPECT_EQ(blind.code, 0) << blind.out;
  EXPECT_THAT(blind.out, HasSubstr("cannot know: give a baseline or A/A DB"));
  const auto seen = plan(d, file + " --variance-from " + synthetic_db(d / "aa.db", 1.0));
  EXPECT_EQ(seen.code, 0) << seen.out;
  EXPECT_THAT(seen.out, HasSubstr("smallest detectable change at the planned 36 pair(s) in 12 stratum(a)"));
  // reclaim_duration is measured in the bounded-reclaim strata only: 12 of the 36 planned pairs
  // count for it, in 4 of the 12 strata (as the check judges it), not all 36.
  EXPECT_THAT(seen.out, ::testing::ContainsRegex(
                            "reclaim_duration +12 in 4 +12 +[0-9.]+ +<= 1.2 +>= 1\\.[0-9]+ +>= 1\\.[0-9]+"));
  EXPECT_THAT(seen.out, ::testing::ContainsRegex("compute_p99 +36 in 12 +36 "));
  EXPECT_THAT(seen.out, Not(HasSubstr("INSENSITIVE")));
  EXPECT_EQ(plan(d, file + " --variance-from " + (d / "none.db")).code, 64);  // not an existing file
}

TEST(PlanSensitivity, RefusesACiDesignThatCannotDetectItsToleranceUnlessOverridden) {
  test_support::TempDir d;
  const std::string db = synthetic_db(d / "aa.db", 1.0);
  const auto refused = plan(d, plannable(d, "tight.yaml", "1.01", false) + " --variance-from " + db + " " + (d / "p.db"));
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_THAT(refused.out, HasSubstr("reclaim_duration"));
  EXPECT_THAT(refused.out, HasSubstr("INSENSITIVE"));
  EXPECT_THAT(refused.out, HasSubstr("cannot detect a change as large as the tolerance of reclaim_duration"));
  EXPECT_THAT(refused.out, HasSubstr("regression.accept_insensitive: true"));
  EXPECT_FALSE(fs::exists(d / "p.db"));
  const auto accepted = plan(d, plannable(d, "accepted.yaml", "1.01", true) + " --variance-from " + db);
  EXPECT_EQ(accepted.code, 0) << accepted.out;
  EXPECT_THAT(accepted.out, HasSubstr("INSENSITIVE"));
  EXPECT_THAT(accepted.out, HasSubstr("1 INSENSITIVE metric(s) accepted: regression.accept_insensitive: true"));
}

TEST(PlanSensitivity, RefusesACiDesignWhoseVarianceDbGivesNoNoise) {
  // A matched-triplets DB holds no baseline/candidate pair: the gate must not pass silently.
  test_support::TempDir d;
  analysis::SyntheticOptions o;
  analysis::write_synthetic_campaign(d / "triplets.db", o);
  const auto refused = plan(d, plannable(d, "c.yaml", "1.2", false) + " --variance-from " + (d / "triplets.db") +
                                   " " + (d / "p.db"));
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_THAT(refused.out, HasSubstr("gave the noise of no checked metric"));
  EXPECT_FALSE(fs::exists(d / "p.db"));
}
