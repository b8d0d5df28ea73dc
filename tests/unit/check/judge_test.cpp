// `harness check FILE --judge DB` through the built binary: a stored A/B DB (analysis/simulate/synthetic.hpp
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

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "results/db.hpp"
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

// Issue 59: a --variance-from DB of the wrong kind is blamed, not the design: exit 2 preview or
// not, for a ci campaign and any other, naming the DB and what DB is needed, never the fields
// of the design or the override of an insensitive design. Before: a kind: ci plan blamed
// "FILE: ..." and offered regression.accept_insensitive; another kind exited 0 with "cannot know".
TEST(PlanSensitivity, AVarianceDbOfTheWrongKindIsBlamedNotTheDesign) {
  test_support::TempDir d;
  analysis::SyntheticOptions o;
  analysis::write_synthetic_campaign(d / "triplets.db", o);  // a matched-triplets DB: no (baseline, candidate) pair
  const std::string blamed = "--variance-from " + (d / "triplets.db") + " gives the noise of none of this campaign's 10 "
                             "metric(s) with a tolerance";
  for (const std::string& db : {std::string(), " " + (d / "p.db")}) {
    const auto refused = plan(d, plannable(d, "c.yaml", "1.2", false) + " --variance-from " + (d / "triplets.db") + db);
    EXPECT_EQ(refused.code, 2) << refused.out;
    EXPECT_THAT(refused.out, HasSubstr(blamed));
    EXPECT_THAT(refused.out, HasSubstr("it is no DB of a finished A/A or A/B run of this design"));
    EXPECT_THAT(refused.out, HasSubstr("stored nothing: --variance-from " + (d / "triplets.db") + " gives no noise"));
    EXPECT_THAT(refused.out, Not(HasSubstr("fields design.repeats")));
    EXPECT_THAT(refused.out, Not(HasSubstr("accept_insensitive")));
    // The design is still printed before the refusal.
    EXPECT_THAT(refused.out, HasSubstr("judged by `harness check`: 6 assertion(s)"));
  }
  EXPECT_FALSE(fs::exists(d / "p.db"));
  // Not only kind: ci: a smoke-kind copy is refused the same way (it used to say "cannot know" and exit 0).
  std::string smoke = test_support::slurp(plannable(d, "s.yaml", "1.2", false));
  smoke.replace(smoke.find("\nkind: ci"), 9, "\nkind: smoke");
  std::ofstream(d / "s.yaml") << smoke;
  const auto other_kind = plan(d, (d / "s.yaml") + " --variance-from " + (d / "triplets.db"));
  EXPECT_EQ(other_kind.code, 2) << other_kind.out;
  EXPECT_THAT(other_kind.out, HasSubstr(blamed));
  // A DB whose stored plan is of another design is named by its design and campaign.
  const auto stored = test_support::run_harness("plan " + std::string(HARNESS_SOURCE_DIR) + "/campaigns/smoke.yaml " +
                                                    (d / "smoke.db"),
                                                d / "out.txt", test_support::LogMode::Replace,
                                                "XDG_CACHE_HOME=" + (d / "cache") + " ");
  ASSERT_EQ(stored.code, 0) << stored.out;
  const auto triplets = plan(d, plannable(d, "c.yaml", "1.2", false) + " --variance-from " + (d / "smoke.db"));
  EXPECT_EQ(triplets.code, 2) << triplets.out;
  EXPECT_THAT(triplets.out, HasSubstr("--variance-from " + (d / "smoke.db") + " is a campaign DB of design "
                                      "matched-triplets (campaign smoke), not of an A/B campaign"));
  EXPECT_THAT(triplets.out, Not(HasSubstr("accept_insensitive")));
}

namespace {

/// The "tolerance needs" cell of `metric`'s row in a plan's sensitivity table: its repeats, or -1.
int repeats_in_row(const std::string& out, const std::string& metric) {
  std::smatch m;
  const std::regex row("\n  " + metric + " [^\n]* ([0-9]+) \\(repeats ([0-9]+)\\)");
  return std::regex_search(out, m, row) ? std::stoi(m[2]) : -1;
}

}  // namespace

// Issue 59: plan says how many pairs each tolerance needs, from the same noise DB, and those
// pairs are what makes the metric sensitive: planned at R - 1 repeats reclaim_duration is still
// INSENSITIVE, at R it is not. Before: only the smallest change at the planned pairs was printed.
TEST(PlanSensitivity, SaysHowManyPairsEachToleranceNeedsAndThoseDetectIt) {
  test_support::TempDir d;
  const std::string db = synthetic_db(d / "aa.db", 1.0);
  const auto seen = plan(d, plannable(d, "tight.yaml", "1.05", true) + " --variance-from " + db);
  EXPECT_EQ(seen.code, 0) << seen.out;
  EXPECT_THAT(seen.out, HasSubstr("tolerance needs"));
  const int r = repeats_in_row(seen.out, "reclaim_duration");
  ASSERT_GT(r, 3) << seen.out;  // 3 repeats are planned, and reclaim_duration is INSENSITIVE there
  // 12 strata of r pairs each: the pairs in all.
  EXPECT_THAT(seen.out, HasSubstr(std::to_string(12 * r) + " (repeats " + std::to_string(r) + ")"));
  EXPECT_THAT(seen.out, ::testing::ContainsRegex("every tolerance detectable: design.repeats: [0-9]+ \\([0-9]+ pairs in "
                                                 "all; planned: 3, 36 pairs\\)"));
  auto with_repeats = [&](int repeats) {
    std::string text = test_support::slurp(d / "tight.yaml");
    text.replace(text.find("  repeats: 3 "), 13, "  repeats: " + std::to_string(repeats) + " ");
    const std::string path = d / ("r" + std::to_string(repeats) + ".yaml");
    std::ofstream(path) << text;
    return plan(d, path + " --variance-from " + db).out;
  };
  const std::string at_r = with_repeats(r), below = with_repeats(r - 1);
  EXPECT_THAT(at_r, ::testing::ContainsRegex("\n  reclaim_duration [^\n]*\\(repeats " + std::to_string(r) + "\\)\n"));
  EXPECT_THAT(below, ::testing::ContainsRegex("\n  reclaim_duration [^\n]*\\(repeats " + std::to_string(r) +
                                              "\\)  INSENSITIVE\n"));
  // The refusal of a kind: ci design names the pairs its tolerance needs.
  const auto refused = plan(d, plannable(d, "refused.yaml", "1.05", false) + " --variance-from " + db + " " + (d / "p.db"));
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_THAT(refused.out, HasSubstr("needs design.repeats >= " + std::to_string(r) + " (" + std::to_string(12 * r) +
                                     " pairs in all)"));
}

// ---- issue 59: output that cannot be mistaken for a result, fits a terminal, and KernelCI reads ----

namespace {

/// The first line of `text`.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

/// The lines of `text` that contain `what`.
std::size_t lines_with(const std::string& text, const std::string& what) {
  std::size_t n = 0, start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    n += text.substr(start, end - start).find(what) != std::string::npos ? 1 : 0;
    start = end + 1;
  }
  return n;
}

/// Makes a synthetic DB read as a real run's: a harness commit on its cases, no generator mark.
void as_if_real(const std::string& db_path) {
  results::Db db(db_path, results::Db::Mode::ReadWrite);
  results::Stmt(db, "UPDATE cases SET source_commit = '" + std::string(40, 'a') + "'").run();
  results::Stmt(db, "DELETE FROM campaign_meta WHERE key = 'synthetic'").run();
}

/// The KCIDB validator (tests/unit/check/kcidb_validate.py) on `file` against the shipped schema.
test_support::HarnessRun validate_kcidb(const test_support::TempDir& d, const std::string& file) {
  const std::string log = d / "validate.txt";
  const int st = std::system(("/usr/bin/python3 " HARNESS_SOURCE_DIR "/tests/unit/check/kcidb_validate.py " HARNESS_SOURCE_DIR
                              "/harness/campaign/check/kcidb_v5_3.schema.json " + file + " > " + log + " 2>&1").c_str());
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, test_support::slurp(log)};
}

}  // namespace

// Item 4: a synthetic DB's check output says SYNTHETIC on the first line of stdout, of the
// Markdown summary and of the JUnit file; the same cases marked as a real run's say nothing of it.
TEST(CheckIssue59, ASyntheticDbSaysSoFirstInEveryOutput) {
  test_support::TempDir d;
  const std::string file = synthetic_campaign(d / "strict.yaml", "synthetic-ab", "1.2");
  const std::string db = synthetic_db(d / "same.db", 1.0);
  const auto r = check(d, file + " --judge " + db + " --junit " + (d / "j.xml") + " --markdown " + (d / "m.md"));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(first_line(r.out), HasSubstr("SYNTHETIC DATA")) << r.out;
  EXPECT_THAT(first_line(test_support::slurp(d / "m.md")), HasSubstr("SYNTHETIC DATA"));
  EXPECT_THAT(first_line(test_support::slurp(d / "j.xml")), HasSubstr("SYNTHETIC DATA"));
  EXPECT_THAT(test_support::slurp(d / "j.xml"), HasSubstr("<property name=\"synthetic\""));
  as_if_real(db);
  const auto real = check(d, file + " --judge " + db + " --junit " + (d / "j2.xml") + " --markdown " + (d / "m2.md"));
  EXPECT_EQ(real.code, 0) << real.out;
  EXPECT_THAT(real.out, Not(HasSubstr("SYNTHETIC")));
  EXPECT_THAT(test_support::slurp(d / "m2.md"), Not(HasSubstr("SYNTHETIC")));
  EXPECT_THAT(test_support::slurp(d / "j2.xml"), Not(HasSubstr("SYNTHETIC")));
}

// Item 6: one summary line per assertion on stdout (before: every case under every assertion,
// 336 lines for these 72 cases); every case's value stays in the Markdown and the JUnit file; a
// failing assertion shows its first three failures and how many more.
TEST(CheckIssue59, StdoutSummarisesEachAssertionTheFilesKeepEveryCase) {
  test_support::TempDir d;
  std::string text = test_support::synthetic_ab_campaign_text("synthetic-ab", "1.2");
  text.replace(text.find("{kind: trigger_within_s, max: 25}"), 33, "{kind: trigger_within_s, max: 1}");
  const std::string file = d / "late.yaml";
  std::ofstream(file) << text;
  const auto r = check(d, file + " --judge " + synthetic_db(d / "same.db", 1.0) + " --junit " + (d / "j.xml") +
                              " --markdown " + (d / "m.md"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("\nPASS  all_cases_completed  (72 case(s))\n"));
  EXPECT_THAT(r.out, HasSubstr("\nFAIL  trigger_within_s <= 1  (72 case(s), 72 failed; trigger_after_s 4 s)\n"));
  EXPECT_THAT(r.out, HasSubstr("      ... and 69 more failure(s)\n"));
  EXPECT_EQ(lines_with(r.out, "synthetic-ab-vm"), 3u) << r.out;  // the three failures shown, no other case
  EXPECT_THAT(r.out, HasSubstr("every case's measured value (336 in all): in the Markdown summary " + (d / "m.md") +
                               " and the JUnit file " + (d / "j.xml")));
  const std::string md = test_support::slurp(d / "m.md"), junit = test_support::slurp(d / "j.xml");
  const std::string one = "synthetic-ab-vm1-fast-random-r3-delayed-activation-candidate";
  EXPECT_EQ(lines_with(md, "| " + one + " |"), 4u);  // completed, trigger, restoration, fg OOM
  EXPECT_THAT(md, HasSubstr("| " + one + " | trigger_after_s | 4 s | **FAIL**: " + one + ": trigger fired 4.0 s"));
  EXPECT_THAT(junit, HasSubstr("<property name=\"" + one + ".trigger_after_s\" value=\"4 s\"/>"));
  // No entity a plain-text reader would see instead of the sign: the tolerance in words.
  EXPECT_THAT(md, Not(HasSubstr("&lt;")));
  EXPECT_THAT(md, Not(HasSubstr("&gt;")));
  EXPECT_THAT(md, HasSubstr("| at most 1.2 |"));
}

// Item 8: --kcidb writes the run as KCIDB I/O 5.3: a checkout and a build of the guest kernel, a
// test per assertion and per metric with the ratio, interval and verdict; valid against the
// schema (python3-jsonschema), and a file broken three ways is not.
TEST(CheckIssue59, KcidbFileOfTheRunValidatesAgainstTheSchema) {
  test_support::TempDir d;
  // compute_p99 without a tolerance: reported (DONE in KCIDB); the design is the same.
  std::string text = test_support::synthetic_ab_campaign_text("synthetic-ab", "1.2");
  text.replace(text.find("    compute_p99: {max_ratio: 1.5}\n"), 34, "");
  const std::string file = d / "strict.yaml";
  std::ofstream(file) << text;
  const std::string db = synthetic_db(d / "slow.db", 1.5);
  as_if_real(db);
  const std::string commit = "0123456789abcdef0123456789abcdef01234567";
  const auto r = check(d, file + " --judge " + db + " --junit " + (d / "j.xml") + " --markdown " + (d / "m.md") +
                              " --kcidb " + (d / "k.json") + " --kcidb-origin ci_lab --kcidb-git-url " +
                              "https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git --kcidb-git-commit " +
                              commit + " --kcidb-artifacts-url https://ci.example.org/job/7/");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("KCIDB file: " + (d / "k.json")));
  const auto k = nlohmann::json::parse(test_support::slurp(d / "k.json"));
  EXPECT_EQ(k["version"], (nlohmann::json{{"major", 5}, {"minor", 3}}));
  ASSERT_EQ(k["checkouts"].size(), 1u) << k.dump(2);
  ASSERT_EQ(k["builds"].size(), 1u);
  EXPECT_EQ(k["checkouts"][0]["git_commit_hash"], commit);
  EXPECT_THAT(k["checkouts"][0]["comment"].get<std::string>(), HasSubstr("6.1.0-57-cloud-amd64"));
  EXPECT_EQ(k["builds"][0]["checkout_id"], k["checkouts"][0]["id"]);
  ASSERT_EQ(k["tests"].size(), 6u + 10u);  // 6 assertions on the one kernel, 10 metrics
  std::map<std::string, nlohmann::json> by_path;
  for (const auto& t : k["tests"]) {
    EXPECT_EQ(t["id"].get<std::string>().rfind("ci_lab:", 0), 0u) << t["id"];
    EXPECT_EQ(t["build_id"], k["builds"][0]["id"]);
    by_path[t["path"].get<std::string>()] = t;
  }
  const auto& rd = by_path.at("reclaim_harness.regression.reclaim_duration");
  EXPECT_EQ(rd["status"], "FAIL");
  EXPECT_NEAR(rd["number"]["value"].get<double>(), 1.5, 0.1);
  EXPECT_GT(rd["misc"]["lower"].get<double>(), 1.2);
  EXPECT_EQ(rd["misc"]["verdict"], "regression");
  EXPECT_EQ(rd["misc"]["max_ratio"], 1.2);
  EXPECT_EQ(rd["output_files"][0], (nlohmann::json{{"name", "j.xml"}, {"url", "https://ci.example.org/job/7/j.xml"}}));
  EXPECT_EQ(by_path.at("reclaim_harness.regression.compute_p99")["status"], "DONE");  // reported: no tolerance
  EXPECT_EQ(by_path.at("reclaim_harness.all_cases_completed")["status"], "PASS");
  EXPECT_EQ(by_path.at("reclaim_harness.all_cases_completed")["misc"]["cases_checked"], 72);
  const auto valid = validate_kcidb(d, d / "k.json");
  EXPECT_EQ(valid.code, 0) << valid.out;
  EXPECT_THAT(valid.out, HasSubstr("valid (1 checkout(s), 1 build(s), 16 test(s))"));
  // Broken three ways: each refused with what is wrong.
  auto broken = [&](const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json b = k;
    edit(b);
    std::ofstream(d / name) << b.dump();
    return validate_kcidb(d, d / name);
  };
  const auto status = broken("status.json", [](nlohmann::json& b) { b["tests"][0]["status"] = "BROKEN"; });
  EXPECT_EQ(status.code, 1) << status.out;
  EXPECT_THAT(status.out, HasSubstr("tests/0/status: 'BROKEN' is not one of"));
  const auto parent = broken("parent.json", [](nlohmann::json& b) { b["builds"][0].erase("checkout_id"); });
  EXPECT_EQ(parent.code, 1) << parent.out;
  EXPECT_THAT(parent.out, HasSubstr("'checkout_id' is a required property"));
  const auto origin = broken("origin.json", [](nlohmann::json& b) { b["tests"][1]["id"] = "someone_else:x"; });
  EXPECT_EQ(origin.code, 1) << origin.out;
  EXPECT_THAT(origin.out, HasSubstr("tests[1].id: 'someone_else:x' does not start with its origin 'ci_lab'"));
  // Options KCIDB would refuse are usage errors, and so is a KCIDB option without --kcidb.
  EXPECT_EQ(check(d, file + " --judge " + db + " --kcidb " + (d / "x.json") + " --kcidb-origin Lab-1").code, 64);
  EXPECT_EQ(check(d, file + " --judge " + db + " --kcidb " + (d / "x.json") + " --kcidb-git-commit abc").code, 64);
  EXPECT_EQ(check(d, file + " --judge " + db + " --kcidb-origin lab").code, 64);
}
