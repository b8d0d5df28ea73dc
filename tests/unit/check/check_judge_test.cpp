// The `harness check` policy in the library (harness/campaign/check/check_judge.hpp), in process, on
// synthetic A/B DBs (tests/common/synthetic_ab_campaign.hpp) whose stored plan is the campaign
// text the test loads:
//   - baseline DB refusals in order: other comparison settings (both values listed), no
//     completed baseline case, another harness commit (only when a commit is given);
//   - judged DB refusals: no completed case, another campaign, no readable plan, another design
//     (design.kind, a variant, a comparison setting: both values named); tolerances may differ;
//   - drift between a stored baseline and the candidate: refused (cannot_judge, Markdown still
//     written) unless allowed, then a warning; drift inside one DB is only a warning;
//   - verdicts: a failed assertion or a regression is a finding, a comparison that cannot be
//     made (an unreadable baseline) is cannot_judge with nothing written; all pass is ok.
#include "harness/campaign/check/check_judge.hpp"

#include "harness/campaign/model/ab_settings.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "results/db.hpp"
#include "tests/common/slurp.hpp"
#include "tests/common/synthetic_ab_campaign.hpp"
#include "tests/common/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace hc = harness::campaign;
using ::testing::HasSubstr;
using ::testing::Not;

/// `text` with its first `from` replaced by `to` (a test bug when absent).
std::string edited(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("test bug: '" + from + "' not in the campaign text");
  return text.replace(at, from.size(), to);
}

/// The campaign `text` written to `path` and loaded as `harness check` loads it.
hc::Campaign campaign_of(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return hc::load_campaign(path);
}

/// The synthetic design's campaign text (reclaim_duration tolerance `max_ratio`).
std::string ab_text(const std::string& max_ratio = "1.2") {
  return test_support::synthetic_ab_campaign_text("synthetic-ab", max_ratio);
}

/// A synthetic DB of `ab_text()`'s design, candidate reclaim `ratio` x the baseline's.
std::string ab_db(const std::string& path, double ratio = 1.0) {
  return test_support::write_synthetic_ab_db(path, ratio, "synthetic-ab", ab_text());
}

/// Runs `sql` on the DB at `path`.
void exec(const std::string& path, const std::string& sql) {
  results::Db db(path, results::Db::Mode::ReadWrite);
  results::Stmt(db, sql).run();
}

hc::DbRefusal baseline_refusal(const std::string& base, const hc::Campaign& c, std::optional<std::string> commit) {
  results::Db db(base, results::Db::Mode::ReadOnly);
  return hc::baseline_db_refusal(db, base, c, commit);
}

hc::DbRefusal judged_refusal(const std::string& path, const hc::Campaign& c) {
  results::Db db(path, results::Db::Mode::ReadOnly);
  return hc::judged_db_refusal(db, path, c);
}

/// Judges `in` under `c` (the baseline from in.baseline_db when given).
hc::Judgement judged(const hc::Campaign& c, const hc::JudgeRequest& in) {
  results::Db db(in.db, results::Db::Mode::ReadOnly);
  std::optional<results::Db> base;
  if (!in.baseline_db.empty()) base.emplace(in.baseline_db, results::Db::Mode::ReadOnly);
  return hc::judge(c, in, db, base ? &*base : nullptr, results::Provenance{});
}

}  // namespace

TEST(CheckBaselineDb, UsableWhenSettingsCasesAndCommitAgree) {
  test_support::TempDir d;
  const auto c = campaign_of(d / "ab.yaml", ab_text());
  const std::string base = ab_db(d / "base.db");
  EXPECT_FALSE(baseline_refusal(base, c, std::nullopt).refused());
  EXPECT_FALSE(baseline_refusal(base, c, std::string("synthetic")).refused());  // the generator's commit
  // Tolerances are not comparison settings: a stricter file still takes this baseline.
  EXPECT_FALSE(baseline_refusal(base, campaign_of(d / "strict.yaml", ab_text("1.01")), std::nullopt).refused());
}

TEST(CheckBaselineDb, OtherSettingsAreRefusedListingEachWithBothValues) {
  test_support::TempDir d;
  const auto c = campaign_of(d / "ab.yaml", edited(ab_text(), "  repeats: 3 ", "  repeats: 4 "));
  const std::string base = ab_db(d / "base.db");
  const auto r = baseline_refusal(base, c, std::nullopt);
  EXPECT_EQ(r.reason, hc::DbRefusalReason::other_settings);
  EXPECT_THAT(r.text, HasSubstr("harness check: --baseline-db " + base + " was run with other comparison settings"));
  EXPECT_THAT(r.text, HasSubstr("  design.repeats: 4 vs 3\n"));
}

TEST(CheckBaselineDb, NoCompletedBaselineCaseIsRefused) {
  test_support::TempDir d;
  const auto c = campaign_of(d / "ab.yaml", ab_text());
  const std::string base = ab_db(d / "base.db");
  exec(base, "UPDATE cases SET status = 'lost' WHERE json_extract(spec_json, '$.variant.name') = 'baseline'");
  const auto r = baseline_refusal(base, c, std::nullopt);
  EXPECT_EQ(r.reason, hc::DbRefusalReason::no_baseline_case);
  EXPECT_EQ(r.text, "harness check: --baseline-db " + base + " holds no completed baseline case\n");
}

TEST(CheckBaselineDb, AnotherHarnessCommitIsRefusedOnlyWhenACommitIsCompared) {
  test_support::TempDir d;
  const auto c = campaign_of(d / "ab.yaml", ab_text());
  const std::string base = ab_db(d / "base.db");
  const auto r = baseline_refusal(base, c, std::string("0123abcd+dirty"));
  EXPECT_EQ(r.reason, hc::DbRefusalReason::other_commit);
  EXPECT_THAT(r.text, HasSubstr("its baseline cases ran harness commit synthetic, this harness is 0123abcd+dirty"));
  EXPECT_THAT(r.text, HasSubstr("--allow-env-drift"));
  EXPECT_FALSE(baseline_refusal(base, c, std::nullopt).refused());  // --judge or --allow-env-drift
}

TEST(CheckBaselineDb, ADbWithoutACampaignPlanThrows) {
  test_support::TempDir d;
  const auto c = campaign_of(d / "ab.yaml", ab_text());
  const std::string base = test_support::write_synthetic_ab_db(d / "bare.db", 1.0);  // placeholder plan
  EXPECT_THROW(baseline_refusal(base, c, std::nullopt), hc::CampaignError);
  exec(base, "DELETE FROM campaign_meta WHERE key = 'campaign_yaml'");
  EXPECT_THROW(baseline_refusal(base, c, std::nullopt), std::runtime_error);
}

TEST(CheckJudgedDb, TheSameDesignIsJudgedWhateverItsTolerances) {
  test_support::TempDir d;
  const std::string db = ab_db(d / "ab.db");
  EXPECT_FALSE(judged_refusal(db, campaign_of(d / "ab.yaml", ab_text())).refused());
  EXPECT_FALSE(judged_refusal(db, campaign_of(d / "loose.yaml", ab_text("3.0"))).refused());
}

TEST(CheckJudgedDb, NoCaseAndAnotherCampaignAreRefused) {
  test_support::TempDir d;
  const auto c = campaign_of(d / "ab.yaml", ab_text());
  const std::string other =
      test_support::write_synthetic_ab_db(d / "other.db", 1.0, "someone-else",
                                          test_support::synthetic_ab_campaign_text("someone-else", "1.2"));
  const auto r = judged_refusal(other, c);
  EXPECT_EQ(r.reason, hc::DbRefusalReason::other_campaign);
  EXPECT_THAT(r.text, HasSubstr("harness check: --judge " + other + ": its cases are of campaign someone-else, not of " +
                                c.file + " (name synthetic-ab)"));
  const std::string none = ab_db(d / "none.db");
  exec(none, "UPDATE cases SET status = 'lost'");
  EXPECT_EQ(judged_refusal(none, c).reason, hc::DbRefusalReason::no_case);
  EXPECT_EQ(judged_refusal(none, c).text, "harness check: --judge " + none + ": holds no completed case to judge\n");
}

TEST(CheckJudgedDb, AnotherDesignIsRefusedNamingBothValues) {
  test_support::TempDir d;
  const std::string db = ab_db(d / "ab.db");
  const auto other = campaign_of(
      d / "other.yaml",
      edited(edited(edited(ab_text(), "  repeats: 3 ", "  repeats: 2 "), "  candidate: {}",
                    "  candidate: {sysctls: {vm.swappiness: 100}}"),
             "  aa: true\n", ""));
  const auto r = judged_refusal(db, other);
  EXPECT_EQ(r.reason, hc::DbRefusalReason::other_design);
  EXPECT_THAT(r.text, HasSubstr("harness check: --judge " + db + ": its plan is of another design than " + other.file));
  EXPECT_THAT(r.text, HasSubstr("  variants.candidate: sysctl vm.swappiness=100 vs nothing set (the guest as booted)\n"));
  EXPECT_THAT(r.text, HasSubstr("  comparison settings sha256: " + hc::comparison_settings_sha256(other) + " vs "));
  EXPECT_THAT(r.text, HasSubstr("    design.repeats: 2 vs 3\n"));
  // Another design kind: the same name as a matched-triplets campaign.
  const std::string triplets = test_support::slurp(std::string(HARNESS_SOURCE_DIR) + "/campaigns/smoke.yaml");
  const auto t = campaign_of(d / "t.yaml", edited(triplets, "name: smoke", "name: synthetic-ab"));
  ASSERT_NE(t.design, "ab-pairs");
  const auto k = judged_refusal(db, t);
  EXPECT_EQ(k.reason, hc::DbRefusalReason::other_design);
  EXPECT_THAT(k.text, HasSubstr("  design.kind: " + t.design + " vs ab-pairs\n"));
}

TEST(CheckJudgedDb, APlanThatIsNoCampaignIsRefused) {
  test_support::TempDir d;
  const auto c = campaign_of(d / "ab.yaml", ab_text());
  const std::string bare = test_support::write_synthetic_ab_db(d / "bare.db", 1.0);  // placeholder plan
  const auto r = judged_refusal(bare, c);
  EXPECT_EQ(r.reason, hc::DbRefusalReason::no_plan);
  EXPECT_THAT(r.text, HasSubstr("its stored campaign YAML does not parse"));
  EXPECT_THAT(r.text, HasSubstr("cannot tell whether it ran " + c.file + "'s design"));
}

TEST(CheckBaselineCases, AreThePlansBaselineVariantCases) {
  test_support::TempDir d;
  const auto ids = hc::baseline_case_ids(campaign_of(d / "ab.yaml", ab_text()));
  EXPECT_EQ(ids.size(), 2u * 2u * 3u * 3u);  // vms x regimes x configurations x pairs
  for (const auto& id : ids) EXPECT_THAT(id, HasSubstr("-baseline")) << id;
}

TEST(CheckJudge, DriftFromAStoredBaselineIsRefusedUnlessAllowed) {
  test_support::TempDir d;
  const auto c = campaign_of(d / "ab.yaml", ab_text());
  const std::string base = ab_db(d / "base.db"), cand = ab_db(d / "cand.db");
  exec(cand, "UPDATE cases SET accelerator = 'tcg'");
  hc::JudgeRequest in{cand, base, d / "j.xml", "", false, hc::baseline_case_ids(c)};
  const auto refused = judged(c, in);
  EXPECT_EQ(refused.verdict, hc::CheckVerdict::cannot_judge);
  EXPECT_THAT(refused.outcome.refusal, HasSubstr("--allow-env-drift"));
  EXPECT_TRUE(refused.outcome.metrics.empty());
  EXPECT_EQ(refused.markdown_path, hc::default_markdown_path(cand));  // written even so
  EXPECT_THAT(test_support::slurp(refused.markdown_path), HasSubstr("REFUSED"));
  EXPECT_THAT(test_support::slurp(d / "j.xml"), HasSubstr("<error"));
  const auto text = hc::render_judgement(refused);
  EXPECT_EQ(text.err, refused.outcome.refusal);
  EXPECT_THAT(text.out, Not(HasSubstr("assertion(s) failed")));

  in.allow_drift = true;
  const auto allowed = judged(c, in);
  EXPECT_EQ(allowed.verdict, hc::CheckVerdict::ok) << hc::render_judgement(allowed).out;
  EXPECT_FALSE(allowed.outcome.metrics.empty());
  EXPECT_THAT(allowed.outcome.warnings,
              ::testing::Contains(HasSubstr("environment drift allowed (--allow-env-drift): accelerator: kvm vs tcg")));
}

TEST(CheckJudge, DriftInsideOneDbIsAWarningNotARefusal) {
  test_support::TempDir d;
  const auto c = campaign_of(d / "ab.yaml", ab_text());
  const std::string db = ab_db(d / "ab.db");
  exec(db, "UPDATE cases SET accelerator = 'tcg' WHERE json_extract(spec_json, '$.variant.name') = 'candidate'");
  const auto j = judged(c, hc::JudgeRequest{db, "", "", "", false, {}});
  EXPECT_EQ(j.verdict, hc::CheckVerdict::ok);
  EXPECT_TRUE(j.outcome.refusal.empty());
  EXPECT_THAT(j.outcome.warnings,
              ::testing::Contains(HasSubstr("the baseline and candidate cases of this run differ in accelerator")));
}

TEST(CheckJudge, AFailedAssertionIsAFinding) {
  test_support::TempDir d;
  // The synthetic writes take about 0.15 s: a 0.01 s bound fails every one.
  const auto c = campaign_of(d / "ab.yaml", edited(ab_text(), "{kind: reclaim_duration_s, max: 10}",
                                                   "{kind: reclaim_duration_s, max: 0.01}"));
  const auto j = judged(c, hc::JudgeRequest{ab_db(d / "ab.db"), "", "", "", false, {}});
  EXPECT_EQ(j.verdict, hc::CheckVerdict::finding);
  EXPECT_EQ(j.failed_assertions(), 1);
  EXPECT_EQ(j.regressions(), 0);
  EXPECT_THAT(hc::render_judgement(j).out, HasSubstr("1 of 6 assertion(s) failed, 0 of "));
}

TEST(CheckJudge, ARegressionIsAFindingAndAnEqualCandidatePasses) {
  test_support::TempDir d;
  const auto c = campaign_of(d / "ab.yaml", ab_text("1.2"));
  const auto slow = judged(c, hc::JudgeRequest{ab_db(d / "slow.db", 1.5), "", d / "j.xml", "", false, {}});
  EXPECT_EQ(slow.verdict, hc::CheckVerdict::finding);
  EXPECT_EQ(slow.failed_assertions(), 0);
  EXPECT_GE(slow.regressions(), 1);
  const auto text = hc::render_judgement(slow);
  EXPECT_THAT(text.out, HasSubstr("REGRESSION reclaim_duration"));
  EXPECT_THAT(text.out, HasSubstr("markdown summary: " + hc::default_markdown_path(d / "slow.db")));
  EXPECT_THAT(test_support::slurp(d / "j.xml"), HasSubstr("<failure"));
  const auto same = judged(c, hc::JudgeRequest{ab_db(d / "same.db", 1.0), "", "", "", false, {}});
  EXPECT_EQ(same.verdict, hc::CheckVerdict::ok);
  EXPECT_EQ(same.regressions(), 0);
}

TEST(CheckJudge, AComparisonThatCannotBeMadeCannotJudgeAndWritesNothing) {
  test_support::TempDir d;
  const auto c = campaign_of(d / "ab.yaml", ab_text());
  const std::string base = ab_db(d / "base.db"), cand = ab_db(d / "cand.db");
  exec(base, "DROP TABLE reclaim_actions");  // the environments read, the metrics not
  const auto j = judged(c, hc::JudgeRequest{cand, base, d / "j.xml", d / "m.md", false, {}});
  EXPECT_EQ(j.verdict, hc::CheckVerdict::cannot_judge);
  EXPECT_FALSE(j.error.empty());
  EXPECT_TRUE(j.markdown_path.empty());
  EXPECT_FALSE(std::filesystem::exists(d / "j.xml"));
  EXPECT_FALSE(std::filesystem::exists(d / "m.md"));
  EXPECT_THAT(hc::render_judgement(j).err, HasSubstr("harness check: cannot compare the variants: "));
}

TEST(CheckVerdict, RefusalOrErrorCannotJudgeFindingsAreFindingsUndecidedIsInconclusive) {
  hc::CheckOutcome o;
  EXPECT_EQ(hc::verdict_of(o, ""), hc::CheckVerdict::ok);
  hc::AssertionResult failed;
  failed.name = "a";
  failed.passed = false;
  o.assertions.push_back(failed);
  EXPECT_EQ(hc::verdict_of(o, ""), hc::CheckVerdict::finding);
  EXPECT_EQ(hc::verdict_of(o, "cannot read"), hc::CheckVerdict::cannot_judge);
  o.assertions.clear();
  analysis::MetricComparison m;
  m.verdict = "regression";
  o.metrics.push_back(m);
  EXPECT_EQ(hc::verdict_of(o, ""), hc::CheckVerdict::finding);
  o.metrics[0].verdict = "inconclusive";
  EXPECT_EQ(hc::verdict_of(o, ""), hc::CheckVerdict::inconclusive);
  o.metrics[0].verdict = "ok-decided";
  EXPECT_EQ(hc::verdict_of(o, ""), hc::CheckVerdict::ok);
  o.metrics[0].verdict = "inconclusive";
  o.assertions.push_back(failed);  // a finding outranks an undecided metric
  EXPECT_EQ(hc::verdict_of(o, ""), hc::CheckVerdict::finding);
  o.assertions.clear();
  o.refusal = "drift";
  EXPECT_EQ(hc::verdict_of(o, ""), hc::CheckVerdict::cannot_judge);
}
