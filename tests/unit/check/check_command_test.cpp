// The policy of `harness check`, `harness plan`, `harness run`, `harness mark-infra`,
// `harness reset-infra` and `harness export` in the library (harness/campaign/*_command.hpp), in
// process with a CommandEnv whose streams are read back, on synthetic A/B DBs
// (tests/common/synthetic_ab_campaign.hpp). The exit codes of docs/CI.md and docs/OUTPUTS.md "Exit
// codes": a regression 1, an equal candidate 0, an undecided interval 5; refused (2) before any
// case runs: a DB holding an earlier run without --reuse, the same kernel on both sides, a
// --baseline-db with a campaign that is not A/B, a missing or other-settings baseline, a --judge
// DB of another campaign; drift from a stored baseline refused (2) unless allowed (0). Plan:
// the same-kernel and sensitivity refusals store nothing (2), a plannable design is stored (0).
// Run: refused by the same-kernel rule (2); without FILE it needs the DB. mark-infra and
// reset-infra: refusals 2 with the reason, done 0; export's default folder.
#include "harness/campaign/commands/check_command.hpp"
#include "harness/campaign/commands/export_command.hpp"
#include "harness/campaign/commands/infra_command.hpp"
#include "harness/campaign/commands/plan_command.hpp"
#include "harness/campaign/commands/run_command.hpp"
#include "harness/cli/exit_codes.hpp"
#include "results/db.hpp"
#include "tests/common/synthetic_ab_campaign.hpp"
#include "tests/common/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

namespace fs = std::filesystem;
namespace hc = harness::campaign;
namespace cli = harness::cli;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

/// A CommandEnv writing into memory: out() and err() give what a command printed. Its
/// open_db refuses a path that is not a regular file, naming it (as the CLI's does).
class Env {
 public:
  explicit Env(const std::string& image_dir) {
    env.out = open_memstream(&out_buf_, &out_len_);
    env.err = open_memstream(&err_buf_, &err_len_);
    env.build = {"0.0.0-test", std::string(40, 'c'), false};
    env.command_line = "harness (test)";
    env.image_dir = [image_dir] { return image_dir; };
    env.open_db = [](const std::string& p) {
      if (!fs::is_regular_file(p)) throw std::runtime_error(p + ": no such DB file");
      return std::make_unique<results::Db>(p, results::Db::Mode::ReadOnly);
    };
    env.check_target = [](const std::string& p) {
      if (fs::exists(p) && fs::file_size(p) > 0) results::Db(p, results::Db::Mode::ReadOnly);
    };
  }
  ~Env() {
    std::fclose(env.out);
    std::fclose(env.err);
    std::free(out_buf_);
    std::free(err_buf_);
  }
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  std::string out() const {
    std::fflush(env.out);
    return std::string(out_buf_, out_len_);
  }
  std::string err() const {
    std::fflush(env.err);
    return std::string(err_buf_, err_len_);
  }
  hc::CommandEnv env;

 private:
  char* out_buf_ = nullptr;
  char* err_buf_ = nullptr;
  std::size_t out_len_ = 0, err_len_ = 0;
};

/// The synthetic A/B campaign (reclaim_duration tolerance `max_ratio`), edited by `edit`, at d/name.
std::string campaign_file(const test_support::TempDir& d, const std::string& name, const std::string& max_ratio,
                          const std::function<void(std::string&)>& edit = {}) {
  std::string t = test_support::synthetic_ab_campaign_text("synthetic-ab", max_ratio);
  if (edit) edit(t);
  std::ofstream(d / name) << t;
  return d / name;
}

/// `t` with `from` replaced by `to` (a test bug when absent).
void replace(std::string& t, const std::string& from, const std::string& to) {
  const auto at = t.find(from);
  if (at == std::string::npos) throw std::logic_error("test bug: '" + from + "' not in the campaign text");
  t.replace(at, from.size(), to);
}

/// A synthetic A/B DB of the campaign's design, candidate reclaim duration `ratio` x the baseline's.
std::string ab_db(const test_support::TempDir& d, const std::string& name, double ratio,
                  const std::string& campaign = "synthetic-ab") {
  return test_support::write_synthetic_ab_db(d / name, ratio, campaign,
                                             test_support::synthetic_ab_campaign_text(campaign, "1.2"));
}

/// `harness check FILE --judge DB` as the CLI asks it.
hc::CheckRequest judging(const std::string& file, const std::string& db) {
  hc::CheckRequest r;
  r.file = file;
  r.judge = db;
  return r;
}

void exec(const std::string& path, const std::string& sql) {
  results::Db db(path, results::Db::Mode::ReadWrite);
  results::Stmt(db, sql).run();
}

}  // namespace

TEST(CheckCommand, ExitCodesFollowTheVerdict) {
  EXPECT_EQ(cli::exit_code_of(hc::check_outcome(hc::CheckVerdict::ok)), cli::kOk);
  EXPECT_EQ(cli::exit_code_of(hc::check_outcome(hc::CheckVerdict::finding)), cli::kFinding);
  EXPECT_EQ(cli::exit_code_of(hc::check_outcome(hc::CheckVerdict::inconclusive)), cli::kInconclusive);
  EXPECT_EQ(cli::exit_code_of(hc::check_outcome(hc::CheckVerdict::cannot_judge)), cli::kError);
  EXPECT_EQ(cli::kFinding, 1);
  EXPECT_EQ(cli::kError, 2);
  EXPECT_EQ(cli::kInconclusive, 5);
}

TEST(CheckCommand, ARegressionIsOneAnEqualCandidateZeroAnUndecidedIntervalFive) {
  test_support::TempDir d;
  const std::string strict = campaign_file(d, "strict.yaml", "1.2");
  {
    Env e(d / "image");
    EXPECT_EQ(cli::exit_code_of(hc::check_command(judging(strict, ab_db(d, "slow.db", 1.5)), e.env)), cli::kFinding) << e.out();
    EXPECT_THAT(e.out(), HasSubstr("--judge: no case runs"));
    EXPECT_THAT(e.out(), HasSubstr("REGRESSION reclaim_duration"));
  }
  {
    Env e(d / "image");
    EXPECT_EQ(cli::exit_code_of(hc::check_command(judging(strict, ab_db(d, "same.db", 1.0)), e.env)), cli::kOk) << e.out();
    EXPECT_THAT(e.out(), Not(HasSubstr("REGRESSION")));
  }
  {
    Env e(d / "image");
    EXPECT_EQ(cli::exit_code_of(hc::check_command(judging(strict, ab_db(d, "near.db", 1.25)), e.env)), cli::kInconclusive) << e.out();
    EXPECT_THAT(e.out(), HasSubstr("INCONCLUSIVE reclaim_duration"));
  }
}

TEST(CheckCommand, UntilDecidedAtTheCapWithAnUndecidedMetricIsFive) {
  test_support::TempDir d;
  Env e(d / "image");
  auto r = judging(campaign_file(d, "tight.yaml", "1.01"), ab_db(d, "same.db", 1.0));
  r.until_decided = true;
  r.max_pairs = 80;
  EXPECT_EQ(cli::exit_code_of(hc::check_command(r, e.env)), cli::kInconclusive) << e.out();
  EXPECT_THAT(e.out(), HasSubstr("judged after 2 look(s) at 36, 72 pairs"));
  EXPECT_THAT(e.out(), HasSubstr("(--max-pairs 80 rounded down to 72"));
}

TEST(CheckCommand, ADbHoldingAnEarlierRunIsRefusedBeforeAnythingRunsUnlessReused) {
  test_support::TempDir d;
  const std::string held = ab_db(d, "held.db", 1.0);
  Env e(d / "image");
  const auto refused = hc::check_run_db("synthetic-ab", held, false, e.env);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr(held + " already holds an earlier run"));
  EXPECT_THAT(refused.error().message, HasSubstr("--reuse"));
  EXPECT_EQ(hc::check_run_db("synthetic-ab", held, true, e.env), held);
  EXPECT_THAT(e.out(), HasSubstr("reusing " + held));
  EXPECT_EQ(hc::check_run_db("synthetic-ab", d / "new.db", false, e.env), d / "new.db");
  EXPECT_THAT(e.out(), HasSubstr("check database: " + (d / "new.db") + " (new run)"));
  EXPECT_THAT(hc::fresh_check_db("ci"), MatchesRegex("ci-[0-9]{8}T[0-9]{6}Z(-[0-9]+)?\\.db"));
  // The whole command: refused with exit 2, no case run, nothing judged.
  Env c(d / "image");
  hc::CheckRequest r;
  r.file = campaign_file(d, "ab.yaml", "1.2");
  r.db = held;
  EXPECT_EQ(cli::exit_code_of(hc::check_command(r, c.env)), cli::kError) << c.out() << c.err();
  EXPECT_THAT(c.err(), HasSubstr("harness check: " + held + " already holds an earlier run"));
  EXPECT_THAT(c.out(), Not(HasSubstr("assertion(s) failed")));
}

TEST(CheckCommand, TheSameKernelOnBothSidesIsRefusedUnlessJudging) {
  test_support::TempDir d;
  const std::string aa = campaign_file(d, "aa.yaml", "1.2", [](std::string& t) { replace(t, "  aa: true\n", ""); });
  hc::CheckRequest r;
  r.file = aa;
  r.db = d / "new.db";
  Env e(d / "image");
  EXPECT_EQ(cli::exit_code_of(hc::check_command(r, e.env)), cli::kError);
  EXPECT_THAT(e.err(), HasSubstr("harness check: "));
  EXPECT_THAT(e.err(), HasSubstr("this is an A/A run"));
  EXPECT_FALSE(fs::exists(d / "new.db"));
  Env j(d / "image");  // --judge runs nothing: the rule is not applied
  EXPECT_EQ(cli::exit_code_of(hc::check_command(judging(aa, ab_db(d, "same.db", 1.0)), j.env)), cli::kOk) << j.err();
}

TEST(CheckCommand, BaselineDbRefusals) {
  test_support::TempDir d;
  const std::string file = campaign_file(d, "ab.yaml", "1.2");
  const std::string cand = ab_db(d, "cand.db", 1.0);
  {  // missing: said as a --baseline-db error
    Env e(d / "image");
    auto r = judging(file, cand);
    r.baseline_db = d / "none.db";
    EXPECT_EQ(cli::exit_code_of(hc::check_command(r, e.env)), cli::kError);
    EXPECT_EQ(e.err(), "harness check: --baseline-db: " + (d / "none.db") + ": no such DB file\n");
    EXPECT_THAT(e.out(), Not(HasSubstr("judging")));
  }
  {  // other comparison settings
    Env e(d / "image");
    auto r = judging(campaign_file(d, "r4.yaml", "1.2", [](std::string& t) { replace(t, "  repeats: 3 ", "  repeats: 4 "); }),
                     cand);
    r.baseline_db = ab_db(d, "base.db", 1.0);
    EXPECT_EQ(cli::exit_code_of(hc::check_command(r, e.env)), cli::kError);
    EXPECT_THAT(e.err(), HasSubstr("was run with other comparison settings"));
  }
  {  // a campaign that is not A/B: the flag is the mistake
    Env e(d / "image");
    hc::CheckRequest r;
    r.file = std::string(HARNESS_SOURCE_DIR) + "/campaigns/smoke.yaml";
    r.judge = cand;
    r.baseline_db = cand;
    EXPECT_EQ(cli::exit_code_of(hc::check_command(r, e.env)), cli::kError);
    EXPECT_THAT(e.err(), HasSubstr("--baseline-db needs an A/B campaign (design.kind ab-pairs)"));
  }
}

TEST(CheckCommand, DriftFromAStoredBaselineIsRefusedUnlessAllowed) {
  test_support::TempDir d;
  const std::string base = ab_db(d, "base.db", 1.0);
  const std::string cand = ab_db(d, "cand.db", 1.0);
  exec(cand, "UPDATE cases SET accelerator = 'tcg'");
  auto r = judging(campaign_file(d, "ab.yaml", "1.2"), cand);
  r.baseline_db = base;
  {
    Env e(d / "image");
    EXPECT_EQ(cli::exit_code_of(hc::check_command(r, e.env)), cli::kError) << e.out();
    EXPECT_THAT(e.out(), HasSubstr("baseline cases from " + base));
    EXPECT_THAT(e.err(), HasSubstr("--allow-env-drift"));
  }
  r.allow_drift = true;
  Env e(d / "image");
  EXPECT_EQ(cli::exit_code_of(hc::check_command(r, e.env)), cli::kOk) << e.out() << e.err();
  EXPECT_THAT(e.out(), HasSubstr("environment drift allowed (--allow-env-drift): accelerator: kvm vs tcg"));
}

TEST(CheckCommand, AJudgedDbOfAnotherCampaignIsRefused) {
  test_support::TempDir d;
  const std::string file = campaign_file(d, "ab.yaml", "1.2");
  Env e(d / "image");
  EXPECT_EQ(cli::exit_code_of(hc::check_command(judging(file, ab_db(d, "other.db", 1.5, "someone-else")), e.env)), cli::kError);
  EXPECT_THAT(e.err(), HasSubstr("its cases are of campaign someone-else, not of " + file));
  EXPECT_THAT(e.out(), Not(HasSubstr("judging ")));
}

namespace {

/// The synthetic campaign planned without booting (overcommit: two guests beyond this machine).
std::string plannable(const test_support::TempDir& d, const std::string& name, const std::string& max_ratio) {
  return campaign_file(d, name, max_ratio,
                       [](std::string& t) { replace(t, "  kind: local-qemu\n", "  kind: local-qemu\n  overcommit: true\n"); });
}

/// Points the local image cache of the engine preview into `d` (plan previews local-qemu).
void cache_in(const test_support::TempDir& d) { ::setenv("XDG_CACHE_HOME", (d / "cache").c_str(), 1); }

}  // namespace

TEST(PlanCommand, PlansAndStoresADesignThatIsNotRefused) {
  test_support::TempDir d;
  cache_in(d);
  Env e(d / "cache/reclaim-harness/image");
  hc::PlanRequest r;
  r.db = d / "p.db";
  EXPECT_EQ(cli::exit_code_of(hc::plan_command(hc::load_campaign(plannable(d, "c.yaml", "1.2")), r, e.env)), cli::kOk) << e.err();
  EXPECT_THAT(e.out(), HasSubstr("campaign synthetic-ab (kind ci)"));
  EXPECT_THAT(e.out(), HasSubstr("stored in " + (d / "p.db")));
  EXPECT_TRUE(fs::is_regular_file(d / "p.db"));
}

TEST(PlanCommand, TheSameKernelAndAnInsensitiveDesignStoreNothing) {
  test_support::TempDir d;
  cache_in(d);
  {
    Env e(d / "cache/reclaim-harness/image");
    hc::PlanRequest r;
    r.db = d / "aa.db";
    const auto c = hc::load_campaign(campaign_file(d, "aa.yaml", "1.2", [](std::string& t) { replace(t, "  aa: true\n", ""); }));
    EXPECT_EQ(cli::exit_code_of(hc::plan_command(c, r, e.env)), cli::kError);
    EXPECT_THAT(e.err(), HasSubstr("harness plan: "));
    EXPECT_THAT(e.out(), HasSubstr("stored nothing: the variants boot the same kernel"));
    EXPECT_FALSE(fs::exists(d / "aa.db"));
  }
  Env e(d / "cache/reclaim-harness/image");
  hc::PlanRequest r;
  r.db = d / "tight.db";
  r.variance_from = ab_db(d, "noise.db", 1.0);
  EXPECT_EQ(cli::exit_code_of(hc::plan_command(hc::load_campaign(plannable(d, "tight.yaml", "1.01")), r, e.env)), cli::kError);
  EXPECT_THAT(e.err(), HasSubstr("cannot detect a change as large as the tolerance of reclaim_duration"));
  EXPECT_THAT(e.out(), HasSubstr("stored nothing: the design cannot detect its tolerances"));
  EXPECT_FALSE(fs::exists(d / "tight.db"));
}

TEST(RunCommand, TheSameKernelIsRefusedAndARunWithoutFileNeedsItsDb) {
  test_support::TempDir d;
  Env e(d / "image");
  const std::string aa = campaign_file(d, "aa.yaml", "1.2", [](std::string& t) { replace(t, "  aa: true\n", ""); });
  EXPECT_EQ(cli::exit_code_of(hc::run_command(aa, d / "run.db", hc::RunOptions{}, e.env)), cli::kError);
  EXPECT_THAT(e.err(), HasSubstr("harness run: "));
  EXPECT_FALSE(fs::exists(d / "run.db"));
  try {
    hc::run_command("", d / "none.db", hc::RunOptions{}, e.env);
    ADD_FAILURE() << "a run without FILE or DB ran";
  } catch (const std::runtime_error& x) {
    EXPECT_THAT(x.what(), HasSubstr(d / "none.db" + ": no such campaign DB"));
  }
}

TEST(InfraCommands, RefusalsAreTwoWithTheReasonAndDoneIsZero) {
  test_support::TempDir d;
  const std::string path = ab_db(d, "ab.db", 1.0);
  results::Db db(path, results::Db::Mode::ReadWrite);
  results::Stmt q(db, "SELECT case_id FROM cases ORDER BY case_id LIMIT 1");
  ASSERT_TRUE(q.step());
  const std::string id = q.text(0);
  Env e(d / "image");
  EXPECT_EQ(cli::exit_code_of(hc::mark_infra_command(db, "no-such-case", "power cut", false, e.env)), cli::kError);
  EXPECT_EQ(cli::exit_code_of(hc::mark_infra_command(db, id, "power cut", false, e.env)), cli::kError);  // an outcome needs the flag
  EXPECT_THAT(e.err(), HasSubstr("--override-outcome"));
  EXPECT_EQ(cli::exit_code_of(hc::mark_infra_command(db, id, "power cut", true, e.env)), cli::kOk) << e.err();
  EXPECT_THAT(e.out(), HasSubstr(id + ": completed -> infra_failed (marked by " + hc::operator_name() +
                                 ", outcome overridden"));
  EXPECT_EQ(cli::exit_code_of(hc::reset_infra_command(db, "", "", e.env)), cli::kError);  // no reason
  EXPECT_EQ(cli::exit_code_of(hc::reset_infra_command(db, "", "power cut", e.env)), cli::kOk) << e.err();
  EXPECT_THAT(e.out(), HasSubstr("1 case(s) reset"));
}

TEST(InfraCommands, TheOperatorIsUserElseTheUid) {
  const char* had = std::getenv("USER");
  const std::string saved = had ? had : "";
  ::setenv("USER", "alice", 1);
  EXPECT_EQ(hc::operator_name(), "alice");
  ::setenv("USER", "", 1);
  EXPECT_THAT(hc::operator_name(), MatchesRegex("uid [0-9]+"));
  if (had) ::setenv("USER", saved.c_str(), 1);
  else ::unsetenv("USER");
}

TEST(ExportCommand, TheDefaultFolderIsTheDbPathWithoutItsExtensionPlusCsv) {
  EXPECT_EQ(hc::default_export_dir("runs/a.db"), "runs/a-csv");
  EXPECT_EQ(hc::default_export_dir("a.db"), "a-csv");
  test_support::TempDir d;
  const std::string path = ab_db(d, "ab.db", 1.0);
  results::Db db(path, results::Db::Mode::ReadOnly);
  Env e(d / "image");
  EXPECT_EQ(cli::exit_code_of(hc::export_command(db, path, "", e.env)), cli::kOk);
  EXPECT_THAT(e.out(), HasSubstr(d / "ab-csv/"));
  EXPECT_TRUE(fs::is_directory(d / "ab-csv"));
}
