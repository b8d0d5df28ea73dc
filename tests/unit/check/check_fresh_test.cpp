// `harness check` never judges stale data, shown end to end with the real
// binary against a fake agent on 127.0.0.1 (tests/common/fake_agent.hpp):
//   - the same command line twice without a DB: two new DBs, each with its own attempts
//     (the second run submits every case again, to a fresh agent as a fresh guest);
//   - the same command line twice with a named DB: the second is refused (exit 2, no new
//     attempt, no agent request); with --reuse it resumes (0 new attempts) and judges.
#include <gmock/gmock.h>
#include <gtest/gtest.h>


#include <cstdlib>
#include <filesystem>
#include <set>

#include "tests/common/fake_agent.hpp"
#include "../campaign/test_files.hpp"
#include "results/db.hpp"
#include "tests/common/run_harness.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testfiles::TempDir;

namespace {

/// One triplet on vm0 (hosts provider) with two assertions.
std::string campaign_yaml() {
  return "name: ci-fresh\nkind: ci\nseed: 5\npinned_commit: any\nvm: {vcpus: 1, memory_mib: 1024}\n"
         "provider: {kind: hosts, vms: [vm0]}\n"
         "phases_s: {warmup: 1, pressure: 1, recovery: 1}\n"
         "cgroups: {bg_memory_max_mib: 300}\n"
         "backend:\n  zram: {disksize_mib: 512, algorithm: lzo-rle, priority: 100}\n"
         "  swapfile: {path: /var/lib/harness/swapfile, priority: 10}\n"
         "pressure: {allocation_mib: 600, active_set_mib: 128}\n"
         "regimes:\n  - {name: fast-random, rate_mib_s: 64, contents: random}\n"
         "canaries: {}\ntrigger: {}\n"
         "configurations: [static-zram, delayed-activation, bounded-reclaim]\n"
         "design: {kind: matched-triplets, repeats: 1, dose_mib: 96}\n"
         "runner: {max_infra_retries: 1, poll_interval_ms: 20}\n"
         "assertions:\n  - kind: all_cases_completed\n  - {kind: reclaim_achieved_ratio, min: 0.8}\n";
}

/// `harness check ARGS --plain` run in the temp dir's work folder, output captured in its check.log.
test_support::HarnessRun check(const TempDir& d, const std::string& args) {
  return test_support::run_harness("check " + args + " --plain", d / "check.log", test_support::LogMode::Replace, "",
                                   d / "work");
}

std::int64_t attempts(const std::string& db_path) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  results::Stmt q(db, "SELECT count(*) FROM attempts");
  q.step();
  return q.int64(0);
}

std::set<std::string> dbs_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".db") out.insert(e.path().string());
  return out;
}

struct Fixture {
  TempDir d;
  fake::FakeAgent agent{d / "agent0", "tok"};
  std::string args;
  Fixture() {
    fs::create_directories(d / "work");
    testfiles::write_token(d / "token", "tok");
    testfiles::write(d / "hosts.yaml", "hosts:\n  - name: vm0\n    url: " + agent.url() + "\n    token_file: " +
                                           (d / "token") + "\n    accelerator: real\n    local: false\n");
    testfiles::write(d / "ci.yaml", campaign_yaml());
    args = (d / "ci.yaml") + " --hosts " + (d / "hosts.yaml");
  }
};

}  // namespace

TEST(CheckFresh, SameCommandTwiceWithoutDbRunsTheCasesAgainInANewDb) {
  Fixture f;
  const auto first = check(f.d, f.args + " --junit j1.xml");
  ASSERT_EQ(first.code, 0) << first.out;
  EXPECT_THAT(first.out, HasSubstr("(new run)"));
  const auto after_first = dbs_in(f.d / "work");
  ASSERT_EQ(after_first.size(), 1u);
  // The second invocation talks to a new agent (a fresh guest, as local guests are per
  // case): every case must be submitted and run again, none taken from the first DB.
  fake::FakeAgent fresh(f.d / "agent0b", "tok");
  testfiles::write(f.d / "hosts.yaml", "hosts:\n  - name: vm0\n    url: " + fresh.url() + "\n    token_file: " +
                                           (f.d / "token") + "\n    accelerator: real\n    local: false\n");
  const auto second = check(f.d, f.args + " --junit j1.xml");
  ASSERT_EQ(second.code, 0) << second.out;
  const auto after_second = dbs_in(f.d / "work");
  ASSERT_EQ(after_second.size(), 2u) << "the second invocation must use a new DB";
  for (const auto& db : after_second) {
    EXPECT_THAT(fs::path(db).filename().string(), ::testing::StartsWith("ci-fresh-"));
    EXPECT_EQ(attempts(db), 3) << db << ": each run makes its own attempts";
  }
  EXPECT_EQ(f.agent.posts(), 3);
  EXPECT_EQ(fresh.posts(), 3) << "the second run submitted every case again";
}

TEST(CheckFresh, NamedDbHoldingARunIsRefusedUnlessReuse) {
  Fixture f;
  const std::string db = f.d / "work/ci.db";
  const auto first = check(f.d, f.args + " " + db);
  ASSERT_EQ(first.code, 0) << first.out;
  ASSERT_EQ(attempts(db), 3);
  const int posts = f.agent.posts();
  const auto again = check(f.d, f.args + " " + db + " --junit again.xml");
  EXPECT_EQ(again.code, 2) << again.out;
  EXPECT_THAT(again.out, HasSubstr(db + " already holds an earlier run (3 attempt(s), 3 case(s))"));
  EXPECT_FALSE(fs::exists(f.d / "work/again.xml"));
  EXPECT_EQ(attempts(db), 3);
  EXPECT_EQ(f.agent.posts(), posts) << "a refused check submits nothing";
  const auto reused = check(f.d, f.args + " --db " + db + " --reuse");  // --db: the older spelling
  EXPECT_EQ(reused.code, 0) << reused.out;
  EXPECT_THAT(reused.out, HasSubstr("reusing " + db));
  EXPECT_THAT(reused.out, HasSubstr("0 attempt(s) in this run"));
  EXPECT_EQ(attempts(db), 3);
}

// The A/B flags on a campaign that is not A/B: the check path is unchanged (no Markdown
// unless asked for), --markdown writes the assertion table, and --baseline-db is refused
// with exit 2 before anything runs.
TEST(CheckFresh, NonAbCampaignMarkdownOnlyWhenAskedAndBaselineDbRefused) {
  Fixture f;
  const std::string db = f.d / "work/plain.db";
  const auto plain = check(f.d, f.args + " " + db);
  ASSERT_EQ(plain.code, 0) << plain.out;
  EXPECT_FALSE(fs::exists(f.d / "work/plain-check.md")) << "no Markdown for a non-A/B check unless --markdown";
  EXPECT_THAT(plain.out, ::testing::Not(HasSubstr("candidate / baseline")));
  const auto md = check(f.d, f.args + " " + (f.d / "work/md.db") + " --markdown summary.md");
  ASSERT_EQ(md.code, 0) << md.out;
  const auto text = testfiles::read(f.d / "work/summary.md");
  EXPECT_THAT(text, HasSubstr("**PASS**: 0 regression(s) in 0 metric(s), 0 of 2 assertion(s) failed"));
  EXPECT_THAT(text, HasSubstr("| all_cases_completed | 3 | pass |"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("| metric |")));
  const int posts = f.agent.posts();
  const auto refused = check(f.d, f.args + " " + (f.d / "work/b.db") + " --baseline-db " + db);
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_THAT(refused.out, HasSubstr("--baseline-db needs an A/B campaign (design.kind ab-pairs)"));
  EXPECT_EQ(f.agent.posts(), posts) << "a refused check submits nothing";
  EXPECT_FALSE(fs::exists(f.d / "work/b.db"));
}

TEST(CheckFresh, BaselineDbOnATripletCampaignWithoutAssertionsNamesTheFlagFirst) {
  TempDir d;
  fs::create_directories(d / "work");
  const auto r = check(d, std::string(HARNESS_SOURCE_DIR) + "/campaigns/smoke.yaml " + (d / "work/s.db") +
                              " --baseline-db " + (d / "work/base.db"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--baseline-db needs an A/B campaign (design.kind ab-pairs)"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("assertions: none given")));
  EXPECT_FALSE(fs::exists(d / "work/s.db"));
}
